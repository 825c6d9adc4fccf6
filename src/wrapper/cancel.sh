#!/bin/sh
# Awaitless cancel request, protocol 1: the client's half of cancel, run on the job's machine (locally with the
# configured shell, over SSH as one remote command). POSIX sh plus kill, mv, rm, date. See "Cancel" atop wrapper.sh.
#
# Usage: sh -c "$(cat cancel.sh)" awaitless-cancel JOB_DIR GRACE [QUEUE_DIR]
#
# 1. Records the request: JOB_DIR/cancel holds GRACE (cancel.tmp, then rename); then a waiting job is taken out of
#    line (QUEUE_DIR/waiting/*.JOB_ID). A wrapper that has not started the command never starts it.
# 2. The wrapper alive: wakes its monitor (USR2 to started's monitor_pid, once /proc shows it is the wrapper's child
#    and handles USR2), which sends the one TERM and the KILL after the grace. Nothing else is signalled from here.
# 3. The wrapper gone (killed) and the command's group still there: stops the group itself, with one TERM. The
#    `cancelled` or `timed_out` marker says TERM went out already (the wrapper writes it before its TERM); otherwise
#    this script claims `cancelled` with noclobber (one of several racing clients wins) and sends TERM. Either way a
#    detached watcher sends KILL when the grace, counted from the marker's time, is over and the group still lives.
# Exit status: 0, or 3 when the request cannot be written (the message is on stderr).

d=$1 g=$2 q=${3-}
[ -d "$d" ] || exit 0
umask 077
case $g in '' | *[!0-9]*) g=10 ;; esac
printf '%s\n' "$g" >"$d/cancel.tmp" && mv -f "$d/cancel.tmp" "$d/cancel" || {
  echo "cannot write $d/cancel" >&2
  exit 3
}
[ -z "$q" ] || rm -f "$q/waiting/"*".${d##*/}"
[ -f "$d/exit" ] && exit 0
[ -r "$d/started" ] || exit 0
w='' ws='' m='' pid='' pgid=''
while IFS='=' read -r k v; do
  case $k in
  wrapper_pid) w=$v ;;
  proc_start) ws=$v ;;
  monitor_pid) m=$v ;;
  pid) pid=$v ;;
  pgid) pgid=$v ;;
  esac
done <"$d/started"

# proc_stat PID: sets st, ppid and start from fields 3, 4 and 22 of /proc/PID/stat (after the command name).
proc_stat() {
  { read -r l <"/proc/$1/stat"; } 2>/dev/null || return 1
  set -f
  # shellcheck disable=SC2086
  set -- ${l##*") "}
  set +f
  st=$1 ppid=$2 start=''
  [ $# -lt 20 ] || {
    shift 19
    start=$1
  }
}

# wrapper_alive: the wrapper runs, is no zombie, and (start time known) is the process that started the job.
wrapper_alive() {
  [ -n "$w" ] && kill -0 "$w" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  proc_stat "$w" || return 1
  [ "$st" != Z ] && { [ -z "$ws" ] || [ -z "$start" ] || [ "$start" = "$ws" ]; }
}

# catches_usr2 PID: PID has a handler for USR2, i.e. the monitor has set its trap (USR2 is signal 12 on Linux:
# bit 11 of SigCgt). Signalled any earlier, the monitor would die of it.
catches_usr2() {
  while read -r k v; do
    [ "$k" = SigCgt: ] || continue
    [ $((0x$v & 2048)) -ne 0 ]
    return
  done <"/proc/$1/status"
  return 1
}

group_alive() {
  if [ -n "$pgid" ]; then kill -0 -"$pgid" 2>/dev/null; else [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; fi
}

signal_group() {
  if [ -n "$pgid" ]; then kill -"$1" -"$pgid" 2>/dev/null; else kill -"$1" "$pid" 2>/dev/null; fi
}

if wrapper_alive; then
  # Only the wrapper's child with its trap set is woken; otherwise (no /proc, a reused pid, a monitor starting up)
  # the next tick acts instead.
  if [ -n "$m" ] && proc_stat "$m" && [ "$ppid" = "$w" ] && catches_usr2 "$m" 2>/dev/null; then
    kill -USR2 "$m" 2>/dev/null
  fi
  exit 0
fi
[ -f "$d/exit" ] && exit 0
group_alive || exit 0
now=$(date +%s)
t=''
if [ -f "$d/timed_out" ]; then
  { read -r t <"$d/timed_out"; } 2>/dev/null
elif (set -C && printf '%s\n' "$now" >"$d/cancelled") 2>/dev/null; then
  echo "awaitless cancel: the wrapper is gone; sending TERM to process group ${pgid:-(none) pid $pid}, KILL after $g s" >>"$d/wrapper.log"
  signal_group TERM
  t=$now
else
  { read -r t <"$d/cancelled"; } 2>/dev/null
fi
case $t in '' | *[!0-9]*) t=$now ;; esac
until=$((t + g))
(
  trap '' HUP
  while group_alive && [ "$(date +%s)" -lt "$until" ]; do sleep 0.2 2>/dev/null || sleep 1; done
  if group_alive; then
    echo "awaitless cancel: grace period over: sending KILL to process group ${pgid:-(none) pid $pid}" >>"$d/wrapper.log"
    signal_group KILL
  fi
) </dev/null >/dev/null 2>&1 &
exit 0
