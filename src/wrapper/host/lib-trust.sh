# Fragment: `trusted DIR` succeeds when DIR is owned by us or root and not group/other-writable unless sticky, else
# prints `error=` and `fix=` lines; `chain DIR` checks DIR (a physical path) and every ancestor. Parses `ls -ldn`
# (POSIX; busybox has it), so hosts without GNU stat work too.
# shellcheck shell=sh
me=$(id -u)
trusted() {
  x=$(ls -ldn "$1" 2>/dev/null) || { echo "error=cannot inspect $1"; return 1; }
  set -f
  # shellcheck disable=SC2086 # the listing's fields, split
  set -- "$1" $x
  set +f
  case $4 in "$me" | 0) ;; *)
    echo "error=$1 is owned by another user (uid $4), so they could replace what awaitless runs there"
    echo "fix=choose a directory you own"
    return 1 ;;
  esac
  case $2 in
  ?????????[tT]*) ;;
  ?????w* | ????????w*)
    echo "error=$1 is writable by other users or its group and not sticky, so they could replace what awaitless runs there"
    echo "fix=run chmod go-w $1 on the host, or choose a directory you own"
    return 1 ;;
  esac
}
chain() {
  c=$1
  while :; do
    trusted "$c" || return 1
    [ "$c" = / ] && return 0
    c=${c%/*}
    [ -n "$c" ] || c=/
  done
}
