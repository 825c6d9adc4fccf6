# Host program `launch`: Args: job dir, wrapper path, the wrapper's SHA-256. The client defines `awl_spec` before
# this text (a function printing spec.sh from a quoted heredoc: taken literally; see launchScript).
# First checks the wrapper: our own file, not writable by others, with that hash; otherwise reports
# `wrapper=stale` and exits 6 before anything is made (the client uploads it again and retries). So a changed
# wrapper is never run and the check costs no round trip of its own. Then writes spec.sh and starts the wrapper in
# its own session (setsid; else immune to SIGHUP) with the login shell when it is a POSIX one, else sh. The
# launcher records the wrapper's pid in wrapper.pid before exec, so a forking setsid cannot mislead us.
# Output (key=value lines): wrapper_pid= proc_start= boot_id= shell=; or error= with wrapper=stale (exit 6),
# nohash=1, nospace=1 avail_kib= size_kib=, exists=1 (exit 3 or 4).
# shellcheck shell=sh
d=$1 w=$2 h=$3
umask 077
# awaitless:include lib-sha256.sh
# awaitless:include lib-free-space.sh
# awaitless:include prelude.sh
# Below this much free space on the host a launch is refused before it writes anything (as locally).
headroom_kib=64
if [ "$awl_nosha" = 1 ]; then
  printf '%s\n' "error=no sha256sum, shasum, openssl or busybox on the host to check the wrapper with" nohash=1
  exit 3
fi
awl_hex "$(sha "$w")"
sum=$awl_sum
o=$(ls -ln "$w" 2>/dev/null) || o=''
set -f
# shellcheck disable=SC2086 # the listing's fields, split
set -- $o
set +f
case ${1-} in ?????w* | ????????w*) sum='' ;; esac
if [ "$sum" != "$h" ] || [ "${3-}" != "$(id -u)" ]; then echo wrapper=stale; exit 6; fi
# A retry's attempt N lives in attempts/N under the first attempt's directory (src/core/retries/retry-policy.ts).
case $d in */attempts/*) mkdir -p "${d%/*}" 2>/dev/null ;; esac
free "${d%/*}"
if [ -n "$avail_kib" ] && [ "$avail_kib" -lt "$headroom_kib" ]; then
  printf '%s\n' "error=less than $headroom_kib KiB free" nospace=1 "avail_kib=$avail_kib" "size_kib=$size_kib"
  exit 3
fi
mkdir "$d" || { [ -d "$d" ] && echo "exists=1"; echo "error=cannot create the job directory $d"; exit 3; }
# spec.sh, then the exit record's reservation (see wrapper.sh); on any failure nothing is left behind.
if ! awl_spec >"$d/spec.sh.tmp" || ! mv -f "$d/spec.sh.tmp" "$d/spec.sh" || ! printf '%511s\n' '' >"$d/exit.tmp"; then
  rm -rf "$d"
  free "${d%/*}"
  printf '%s\n' "error=cannot write $d/spec.sh" "avail_kib=$avail_kib" "size_kib=$size_kib"
  [ "${avail_kib:-999999}" -ge "$headroom_kib" ] || echo nospace=1
  exit 3
fi
case ${SHELL##*/} in sh | dash | bash | ash | ksh | mksh | busybox) s=$SHELL ;; *) s='sh' ;; esac
[ -x "$s" ] || s='sh'
cd "$HOME" 2>/dev/null || cd /
# shellcheck disable=SC2016 # expanded by the launched shell, not here
l='echo "$$" >"$1/wrapper.pid.tmp" && mv -f "$1/wrapper.pid.tmp" "$1/wrapper.pid"; exec "$0" "$2" "$1"'
if command -v setsid >/dev/null 2>&1; then
  setsid "$s" -c "$l" "$s" "$d" "$w" </dev/null >>"$d/wrapper.log" 2>&1 &
else
  (trap '' HUP; exec "$s" -c "$l" "$s" "$d" "$w") </dev/null >>"$d/wrapper.log" 2>&1 &
fi
i=0
while [ ! -s "$d/wrapper.pid" ] && [ $i -lt 200 ]; do
  sleep 0.02 2>/dev/null || sleep 1
  i=$((i + 1))
done
p=''
[ -r "$d/wrapper.pid" ] && read -r p <"$d/wrapper.pid"
[ -n "$p" ] || { echo "error=the wrapper did not start (see $d/wrapper.log)"; exit 4; }
echo "wrapper_pid=$p"
awl_proc_stat "$p" && echo "proc_start=$awl_start"
awl_read_boot_id
echo "boot_id=$awl_boot_id"
echo "shell=$s"
