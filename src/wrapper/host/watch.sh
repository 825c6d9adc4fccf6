# Host program `watch`: Args: interval (decimal seconds), lifetime (s), then job dirs (prefixed `+` to watch output
# sizes too).
# Output: `c INDEX SIGNATURE` whenever a job's lifecycle files (started, exit, cancel, queued) appear or go, all of
# them once at start (SIGNATURE: the letters s x c q of the files present, m when the directory is missing, then for
# `+` dirs a space and the sizes of stdout and stderr, each followed by `.`), and `.` every tick: when the client is
# gone the write fails and the loop ends instead of lingering.
# shellcheck shell=sh
iv=$1 life=$2
shift 2
end=$(($(date +%s) + life))
first=1 n=0
while :; do
  i=0
  for e in "$@"; do
    i=$((i + 1))
    d=${e#+}
    g=''
    [ -f "$d/started" ] && g=${g}s
    [ -f "$d/exit" ] && g=${g}x
    [ -f "$d/cancel" ] && g=${g}c
    [ -f "$d/queued" ] && g=${g}q
    [ -d "$d" ] || g=${g}m
    # shellcheck disable=SC2034,SC2012 # only ls's size column is read
    [ "$e" != "$d" ] && g="$g $(LC_ALL=C ls -ln "$d/stdout" "$d/stderr" 2>/dev/null | while read -r a b c x z y; do printf '%s.' "$z"; done)"
    eval "o=\${s_$i-}"
    # shellcheck disable=SC2154 # o is set by the eval
    if [ "$first" = 1 ] || [ "$g" != "$o" ]; then
      echo "c $i $g" || exit 0
      eval "s_$i=\$g"
    fi
  done
  first=0
  echo . || exit 0
  # The clock (a fork) only every 40 ticks: the lifetime is a bound, not a deadline.
  n=$((n + 1))
  if [ "$n" -ge 40 ]; then
    n=0
    [ "$(date +%s)" -lt "$end" ] || exit 0
  fi
  sleep "$iv" 2>/dev/null || sleep 1
done
