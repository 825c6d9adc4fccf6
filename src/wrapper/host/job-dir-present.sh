# Host program `job-dir-present`: Arg: a job directory.
# Output: `present=1` when it exists, `present=0` when it certainly does not, else `present=unknown`.
# shellcheck shell=sh
d=$1 p=${1%/*}
if [ -e "$d" ] || [ -h "$d" ]; then echo present=1
elif [ -d "$p" ] && [ -x "$p" ]; then echo present=0
else echo present=unknown; fi
