# Host program `remove`: Args: DIR JOB_ID. Removes job JOB_ID's directory DIR (gc), after the rule every removal of
# a job's files follows (src/core/util/job-dir-guard.ts): DIR is <…>/jobs/JOB_ID or <…>/jobs/JOB_ID/attempts/N, an
# absolute path without `.`, `..` or empty components, reached without a symbolic link (its parent's physical path
# is the path itself), and neither DIR, JOB_ID's directory nor attempts/ is a link. Missing: nothing to do.
# Output: `refused=WHY` with exit 2 when the rule refuses DIR; a failed rm exits 1.
# shellcheck shell=sh
d=$1 id=$2
no() { echo "refused=$1"; exit 2; }
case $id in job_*) ;; *) no "bad job ID" ;; esac
case ${id#job_} in '' | *[!0-9A-Z]*) no "bad job ID" ;; esac
case $d in /*) ;; *) no "not an absolute path" ;; esac
case $d/ in *//* | */./* | */../*) no "not a normalised path" ;; esac
b=$d
case $d in */attempts/*)
  n=${d##*/attempts/}
  case $n in '' | 0* | 1 | *[!0-9]*) no "bad attempt directory" ;; esac
  b=${d%/attempts/*} ;;
esac
[ "${b##*/}" = "$id" ] || no "not the directory of $id"
p=${b%/*}
[ "${p##*/}" = jobs ] || no "not in a jobs directory"
[ -d "$p" ] || exit 0
[ "$(cd "$p" && pwd -P)" = "$p" ] || no "a symbolic link on the way"
for x in "$b" "$b/attempts" "$d"; do
  [ -h "$x" ] && no "$x is a symbolic link"
done
[ -d "$d" ] || exit 0
rm -rf "$d" || exit 1
