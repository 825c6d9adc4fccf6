# Fragment: `free DIR` sets avail_kib and size_kib of DIR's file system ('' when df cannot tell).
# shellcheck shell=sh
# shellcheck disable=SC2034 # set for the includer
free() {
  avail_kib='' size_kib=''
  # shellcheck disable=SC2046 # df's columns, split
  set -- $(df -Pk "$1" 2>/dev/null | tail -n 1)
  case ${4:-x} in *[!0-9]*) ;; *) avail_kib=$4 size_kib=$2 ;; esac
}
