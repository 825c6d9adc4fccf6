# Host program `read-log`: Args: job dir, stream, max bytes.
# Output: a first line `HEAD_FILE PREV LIVE DROPPED` (sizes in bytes: STREAM.head, STREAM.prev, STREAM, and the
# count in STREAM.dropped), then up to max (or more, if the live file grows meanwhile) trailing bytes of prev + live.
# shellcheck shell=sh
d=$1 s=$2 n=$3
# shellcheck disable=SC2046 # the listing's fields, split
sz() { set -- $(LC_ALL=C ls -ln "$1" 2>/dev/null); echo "${5:-0}"; }
h=$(sz "$d/$s.head") p=$(sz "$d/$s.prev") l=$(sz "$d/$s") dr=0
[ -r "$d/$s.dropped" ] && read -r dr <"$d/$s.dropped"
dr=${dr:-0}
echo "$h $p $l $dr"
if [ "$l" -ge "$n" ]; then
  tail -c "$n" "$d/$s"
else
  [ "$p" -gt 0 ] && tail -c $((n - l)) "$d/$s.prev"
  [ "$l" -gt 0 ] && cat "$d/$s"
fi
exit 0
