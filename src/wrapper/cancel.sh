#!/bin/sh
# Awaitless cancel request, protocol 1: the client's half of cancel, run on the job's machine (locally with the
# configured shell, over SSH as one remote command). POSIX sh plus kill, mv, rm, date. See "Cancel" atop wrapper.sh.
#
# Usage: sh -c "$(cat cancel.sh)" awaitless-cancel JOB_DIR GRACE [QUEUE_DIR]
#
# 1. Records the request: JOB_DIR/cancel holds GRACE (cancel.tmp, then rename); then a waiting job is taken out of
#    line (QUEUE_DIR/waiting/*.JOB_ID). A wrapper that has not started the command never starts it; one holding for
#    its dependencies or waiting in a queue is woken with USR2 to see the request now.
# 2. The wrapper alive: wakes its monitor (USR2 to started's monitor_pid, once /proc shows it is the wrapper's child
#    and handles USR2), which sends the one TERM and the KILL after the grace. Nothing else is signalled from here.
# 3. The wrapper gone (killed) and the command's group still there: stops the group itself, with one TERM. The
#    `cancelled` or `timed_out` marker says TERM went out already (the wrapper writes it before its TERM); otherwise
#    this script claims `cancelled` with noclobber (one of several racing clients wins) and sends TERM. Either way a
#    detached watcher sends KILL when the grace, counted from the marker's time, is over and the group still lives.
#    The group is signalled only when its leader is certainly the job's command: pid and pgid above 1, and the
#    leader alive with the start time `started` recorded (pid_start, /proc/PID/stat field 22). Without /proc (or a
#    record without pid_start) that cannot be confirmed and nothing is signalled.
# Files in JOB_DIR are untrusted: nothing written here follows a symlink (a fresh name made with noclobber, then
#    mv; a symlinked target is refused), and a record naming pid or pgid 0 or 1 is refused.
# Stdout: one line, the word `signalled` (the wrapper was woken, or the group was sent TERM by this script),
#    `stopping` (the group's TERM went out earlier; the KILL watcher is left), `refused` or `none`, then a sentence.
# Exit status: 0, or 3 when the request cannot be written (the message is on stderr).

# awaitless:include prelude.sh

d=$1 g=$2 q=${3-}
[ -d "$d" ] || {
  echo "none no job directory"
  exit 0
}
umask 077
case $g in '' | *[!0-9]*) g=10 ;; esac

# put FILE TEXT: FILE holds TEXT, written to a fresh name with noclobber (O_EXCL: no symlink is followed, dangling
# or not, in dash, bash and busybox sh), then renamed over FILE unless FILE is a symlink or a directory.
put() {
  tmp=$1.tmp.$$
  rm -f "$tmp"
  (set -C && printf '%s\n' "$2" >"$tmp") 2>/dev/null || return 1
  if [ -h "$1" ] || [ -d "$1" ]; then
    rm -f "$tmp"
    echo "$1 is a symlink or a directory; refusing to write through it" >&2
    return 1
  fi
  mv -f "$tmp" "$1"
}

# note TEXT: append to wrapper.log, only when it is a regular file and not a symlink.
note() {
  [ -f "$d/wrapper.log" ] && [ ! -h "$d/wrapper.log" ] && echo "awaitless cancel: $1" >>"$d/wrapper.log"
}

say() {
  printf '%s %s\n' "$1" "$2"
  exit 0
}

put "$d/cancel" "$g" || {
  echo "cannot write $d/cancel" >&2
  exit 3
}
[ -z "$q" ] || rm -f "$q/waiting/"*".${d##*/}"
[ -f "$d/exit" ] && say none "the job has ended"
# A wrapper holding for its dependencies or waiting in a queue (its `queued` record names after= or ticket=, and the
# wrapper) is woken with USR2, only once /proc shows that process started when the record says and handles USR2
# (its trap set).
held_wake() {
  hw='' hs='' ha=''
  { while IFS='=' read -r k v; do
    case $k in
    after | ticket) ha=$ha$v ;;
    wrapper_pid) hw=$v ;;
    proc_start) hs=$v ;;
    esac
  done <"$d/queued"; } 2>/dev/null
  [ -n "$ha" ] && [ -n "$hs" ] || return 0
  case $hw in '' | *[!0-9]* | 0 | 1 | 0*) return 0 ;; esac
  awl_pid_alive "$hw" "$hs" && [ -n "$awl_start" ] || return 0
  while read -r k v; do
    [ "$k" = SigCgt: ] || continue
    [ $((0x$v & 2048)) -eq 0 ] || kill -USR2 "$hw" 2>/dev/null
    return 0
  done <"/proc/$hw/status"
}
if [ ! -r "$d/started" ]; then
  [ ! -f "$d/queued" ] || held_wake
  say none "the command has not started"
fi
w='' ws='' m='' pid='' pgid='' ps=''
while IFS='=' read -r k v; do
  case $k in
  wrapper_pid) w=$v ;;
  proc_start) ws=$v ;;
  monitor_pid) m=$v ;;
  pid) pid=$v ;;
  pgid) pgid=$v ;;
  pid_start) ps=$v ;;
  esac
done <"$d/started"
# A record naming pid or pgid 0 or 1 (or not a number) is not this job's: kill -1 would signal every process.
case $pid in '' | *[!0-9]* | 0 | 1 | 0*) say refused "started names pid '$pid'; not signalling it" ;; esac
case $pgid in '') ;; *[!0-9]* | 0 | 1 | 0*) say refused "started names process group '$pgid'; not signalling it" ;; esac
case $w in *[!0-9]* | 0 | 1 | 0*) w='' ;; esac
case $m in *[!0-9]* | 0 | 1 | 0*) m='' ;; esac

# wrapper_alive: the wrapper runs, is no zombie, and (start time known) is the process that started the job.
wrapper_alive() {
  [ -n "$w" ] && kill -0 "$w" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  awl_proc_stat "$w" || return 1
  [ "$awl_st" != Z ] && { [ -z "$ws" ] || [ -z "$awl_start" ] || [ "$awl_start" = "$ws" ]; }
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

# leader_is_command: the command's process (pid, the group's leader) is alive, no zombie, and started at the time
# `started` recorded; sets why when not. Without /proc or pid_start there is nothing to compare: not confirmed.
leader_is_command() {
  why="no /proc to compare start times"
  [ -r /proc/self/stat ] || return 1
  why="started records no pid_start"
  [ -n "$ps" ] || return 1
  why="process $pid is gone"
  awl_proc_stat "$pid" && [ "$awl_st" != Z ] || return 1
  why="process $pid started at $awl_start, the command at $ps"
  [ "$awl_start" = "$ps" ] || return 1
  why="process $pid is in group $awl_pg, not $pgid"
  [ -z "$pgid" ] || { [ "$pid" = "$pgid" ] && [ "$awl_pg" = "$pgid" ]; }
}

signal_group() {
  if [ -n "$pgid" ]; then kill -"$1" -"$pgid" 2>/dev/null; else kill -"$1" "$pid" 2>/dev/null; fi
}

if wrapper_alive; then
  # Only the wrapper's child with its trap set is woken; otherwise (no /proc, a reused pid, a monitor starting up)
  # the next tick acts instead.
  if [ -n "$m" ] && awl_proc_stat "$m" && [ "$awl_ppid" = "$w" ] && catches_usr2 "$m" 2>/dev/null; then
    kill -USR2 "$m" 2>/dev/null
  fi
  say signalled "the wrapper stops the command"
fi
[ -f "$d/exit" ] && say none "the job has ended"
group_alive || say none "the command's process group is gone"
if ! leader_is_command; then
  case $why in *" is gone") say none "the command has exited ($why); its group is not signalled" ;; esac
  say refused "process ${pgid:-$pid} is not certainly this job's command ($why); not signalling it"
fi
now=$(date +%s)
t=''
what=stopping
if [ -f "$d/timed_out" ]; then
  { read -r t <"$d/timed_out"; } 2>/dev/null
elif (set -C && printf '%s\n' "$now" >"$d/cancelled") 2>/dev/null; then
  note "the wrapper is gone; sending TERM to process group ${pgid:-(none) pid $pid}, KILL after $g s"
  signal_group TERM
  t=$now
  what=signalled
else
  { read -r t <"$d/cancelled"; } 2>/dev/null
fi
case $t in '' | *[!0-9]*) t=$now ;; esac
until=$((t + g))
(
  trap '' HUP
  while group_alive && [ "$(date +%s)" -lt "$until" ]; do sleep 0.2 2>/dev/null || sleep 1; done
  # The group whose TERM went out, unless its leader now runs with another start time (a pid reused meanwhile).
  if group_alive && { [ ! -d "/proc/$pid" ] || leader_is_command; }; then
    note "grace period over: sending KILL to process group ${pgid:-(none) pid $pid}"
    signal_group KILL
  fi
) </dev/null >/dev/null 2>&1 &
if [ "$what" = signalled ]; then
  say signalled "the wrapper is gone; sent TERM to process group ${pgid:-(none) pid $pid}, KILL after $g s"
fi
say stopping "the wrapper is gone; process group ${pgid:-(none) pid $pid} was sent TERM earlier, KILL after $g s"
