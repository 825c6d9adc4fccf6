# Host program `settle`: Args: DIR OUTCOME ATTEMPT. A retried job has ended (the client recorded its end: outcome ok
# or failed, its last attempt ATTEMPT): DIR, its first attempt's directory, gets the `final` record its held
# dependents wait for (wrapper.sh "Dependencies"; kept when the wrapper wrote it first), and each dependent
# registered in DIR/dependents is woken with USR1.
# Stdout: `settled=1` when the record is there, `settled=0` when DIR is gone or the record could not be written.
# shellcheck shell=sh

# awaitless:include prelude.sh

case $2 in ok | failed) ;; *) echo "bad outcome $2" >&2; exit 2 ;; esac
case $3 in '' | *[!0-9]*) echo "bad attempt $3" >&2; exit 2 ;; esac
umask 077
if awl_put_final "$1" "$2" "$3"; then
  awl_wake_dependents "$1"
  echo settled=1
else
  echo settled=0
fi
