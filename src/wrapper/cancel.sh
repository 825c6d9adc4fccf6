#!/bin/sh
# Awaitless cancel request, protocol 1: the client's half of cancel, run on the job's machine (locally with the
# configured shell, over SSH as one remote command). POSIX sh plus kill, mv, rm, date. See "Cancel" atop wrapper.sh.
#
# Usage: sh -c "$(cat cancel.sh)" awaitless-cancel JOB_DIR GRACE [QUEUE_DIR [JOB_ID]]
#   (JOB_ID: the job's ID; without it, JOB_DIR's name, or the name above attempts/N)
#
# 1. Records the request: JOB_DIR/cancel holds GRACE (cancel.tmp, then rename); then a waiting job is taken out of
#    line (QUEUE_DIR/waiting/*.JOB_ID). A wrapper that has not started the command never starts it; one holding for
#    its dependencies or waiting in a queue is woken with USR2 to see the request now.
# 2. The wrapper alive: wakes its monitor (USR2 to started's monitor_pid, once /proc shows it is the wrapper's child
#    and handles USR2), which sends the one TERM and the KILL after the grace, to the command's group and to every
#    other process of the job. Nothing else is signalled from here.
# 3. The wrapper gone (killed) and processes of the job still there: stops them itself, with one TERM. The
#    `cancelled` or `timed_out` marker says TERM went out already (the wrapper writes it before its TERM); otherwise
#    this script claims `cancelled` with noclobber (one of several racing clients wins) and sends TERM. Either way a
#    detached watcher sends KILL when the grace, counted from the marker's time, is over and they still live.
#    The group is signalled only when its leader is certainly the job's command: pid and pgid above 1, the leader
#    alive with the start time `started` recorded (pid_start, /proc/PID/stat field 22), and its environment carrying
#    AWAITLESS_JOB_ID=JOB_ID. Without /proc (or a record without pid_start), or with an environment this user may not
#    read, that cannot be confirmed and the group is not signalled. Other processes of the job (outside the group) are
#    those tracking.sh finds: in the job's cgroup (`started` names it), or carrying JOB_ID in their environment.
# 4. The job ended and its exit record says it kept processes running (leftovers_action=kept): stops them, with one
#    TERM (the claim of `leftovers.stopped`, noclobber, says who sends it) and a detached watcher's KILL after the
#    grace; they are found as in 3.
# Files in JOB_DIR are untrusted: nothing written here follows a symlink (a fresh name made with noclobber, then
#    mv; a symlinked target is refused), and a record naming pid or pgid 0 or 1 is refused.
# Stdout: one line, the word `signalled` (the wrapper was woken, or the job's processes were sent TERM by this
#    script), `stopping` (their TERM went out earlier; the KILL watcher is left), `refused` or `none`, then a sentence.
# Exit status: 0, or 3 when the request cannot be written (the message is on stderr).

# awaitless:include prelude.sh
# awaitless:include tracking.sh

d=$1 g=$2 q=${3-} AWL_JOB_ID=${4-}
if [ -z "$AWL_JOB_ID" ]; then
  AWL_JOB_ID=${d%/}
  case $AWL_JOB_ID in */attempts/[0-9]*) AWL_JOB_ID=${AWL_JOB_ID%/attempts/*} ;; esac
  AWL_JOB_ID=${AWL_JOB_ID##*/}
fi
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

awl_log() { note "$*"; }
awl_now() { awl_t=$(date +%s); }

# job_procs: awl_job_procs (tracking.sh) of the job's processes: the members of its cgroup (the one `started`
# names, when it is named as the wrapper names them), or those carrying its ID in their environment; plus the
# command's group when pgid is set. This script's own processes are left out.
job_procs() {
  awl_exclude=$$
  if [ -n "$awl_cg_track" ]; then
    awl_job_procs </dev/null
  else
    awl_job_procs <<EOF
$(awl_env_list)
EOF
  fi
}

# read_started: pid pgid pid_start, the wrapper's pid, start time and monitor (w ws m), and the job's cgroup
# (awl_cg_track, only a path of the wrapper's making: .../awaitless-JOB_ID.N).
read_started() {
  w='' ws='' m='' pid='' pgid='' ps='' awl_cg_track='' awl_cg_inherited='' cgs=''
  { while IFS='=' read -r k v; do
    case $k in
    wrapper_pid) w=$v ;;
    proc_start) ws=$v ;;
    monitor_pid) m=$v ;;
    pid) pid=$v ;;
    pgid) pgid=$v ;;
    pid_start) ps=$v ;;
    cgroup) awl_cg_track=$v ;;
    cgroups) cgs=$v ;;
    esac
  done <"$d/started"; } 2>/dev/null
  # the cgroups made for the job, each named as the wrapper names them (removed once empty: watch_kill)
  awl_cg_dirs=''
  for x in ${cgs-}; do
    case $x in /*/awaitless-"$AWL_JOB_ID".[0-9]*) ;; *) continue ;; esac
    case $x in */../* | *[!A-Za-z0-9_./:@,-]*) continue ;; esac
    awl_cg_dirs="$awl_cg_dirs $x"
  done
  case $awl_cg_track in
  /*/awaitless-"$AWL_JOB_ID".[0-9]*) ;;
  *) awl_cg_track='' ;;
  esac
  case $awl_cg_track in */../* | *[!A-Za-z0-9_./:@,-]*) awl_cg_track='' ;; esac
  [ -z "$awl_cg_track" ] || [ -d "$awl_cg_track" ] || awl_cg_track=''
}

# watch_kill UNTIL GROUP: a detached watcher that sends KILL at UNTIL (epoch seconds) to what is left of the job:
# its group (GROUP=1; only while its leader is gone or still matches) and its other processes; then drops the cgroup.
watch_kill() {
  (
    trap '' HUP
    wk_pg=$pgid
    pgid=''
    while [ "$(date +%s)" -lt "$1" ]; do
      job_procs
      pgid=$wk_pg
      { [ "$awl_procs_n" -gt 0 ] || { [ "$2" = 1 ] && group_alive; }; } || break
      pgid=''
      sleep 0.2 2>/dev/null || sleep 1
    done
    pgid=$wk_pg
    if [ "$2" = 1 ] && group_alive && { [ ! -d "/proc/$pid" ] || leader_is_command; }; then
      note "grace period over: sending KILL to process group ${pgid:-(none) pid $pid}"
      signal_group KILL
    fi
    pgid=''
    job_procs
    if [ "$awl_procs_n" -gt 0 ]; then
      note "grace period over: sending KILL to the job's processes:$awl_procs"
      awl_signal_procs KILL
    fi
    # the job's cgroups, once the killed processes are gone from them (bounded)
    i=0
    while [ "$i" -lt 30 ]; do
      awl_track_drop
      left=''
      for x in $awl_cg_dirs; do [ ! -d "$x" ] || left=1; done
      [ -n "$left" ] || break
      sleep 0.1 2>/dev/null || sleep 1
      i=$((i + 1))
    done
  ) </dev/null >/dev/null 2>&1 &
}

# stop_kept: the job has ended; its exit record says it kept processes running: stop them (step 4).
stop_kept() {
  kept=''
  { while IFS='=' read -r k v; do [ "$k" != leftovers_action ] || kept=$v; done <"$d/exit"; } 2>/dev/null
  [ "$kept" = kept ] || say none "the job has ended"
  [ -r "$d/started" ] || say none "the job has ended"
  read_started
  # its group's number may belong to someone else by now: only processes in its cgroup or carrying its ID count
  pgid=''
  job_procs
  [ "$awl_procs_n" -gt 0 ] || say none "the job has ended; nothing it kept running is left"
  now=$(date +%s)
  t=$now
  if (set -C && printf '%s\n' "$now" >"$d/leftovers.stopped") 2>/dev/null; then
    note "stopping the $awl_procs_n process(es) the job kept running:$awl_procs; KILL after $g s"
    awl_signal_procs TERM
    watch_kill $((now + g)) 0
    say signalled "sent TERM to the $awl_procs_n process(es) it kept running, KILL after $g s"
  fi
  { read -r t <"$d/leftovers.stopped"; } 2>/dev/null
  case $t in '' | *[!0-9]*) t=$now ;; esac
  watch_kill $((t + g)) 0
  say stopping "the processes it kept running were sent TERM earlier, KILL after $g s"
}

put "$d/cancel" "$g" || {
  echo "cannot write $d/cancel" >&2
  exit 3
}
[ -z "$q" ] || rm -f "$q/waiting/"*".${d##*/}"
[ -f "$d/exit" ] && stop_kept
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
  awl_pid_alive "$hw" "$hs" && [ -n "$awl_start" ] && awl_is_wrapper_of "$hw" "$AWL_JOB_ID" || return 0
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
read_started
# A record naming pid or pgid 0 or 1 (or not a number) is not this job's: kill -1 would signal every process.
case $pid in '' | *[!0-9]* | 0 | 1 | 0*) say refused "started names pid '$pid'; not signalling it" ;; esac
case $pgid in '') ;; *[!0-9]* | 0 | 1 | 0*) say refused "started names process group '$pgid'; not signalling it" ;; esac
case $w in *[!0-9]* | 0 | 1 | 0*) w='' ;; esac
case $m in *[!0-9]* | 0 | 1 | 0*) m='' ;; esac

# wrapper_alive: the wrapper runs, is no zombie, (start time known) is the process that started the job, and is a
# wrapper of this job (its command line: a forged record naming another live process is not).
wrapper_alive() {
  [ -n "$w" ] && kill -0 "$w" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  awl_proc_stat "$w" || return 1
  [ "$awl_st" != Z ] && { [ -z "$ws" ] || [ -z "$awl_start" ] || [ "$awl_start" = "$ws" ]; } &&
    awl_is_wrapper_of "$w" "$AWL_JOB_ID"
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
  [ -z "$pgid" ] || { [ "$pid" = "$pgid" ] && [ "$awl_pg" = "$pgid" ]; } || return 1
  why="process $pid does not carry AWAITLESS_JOB_ID=$AWL_JOB_ID in its environment (or it cannot be read)"
  awl_carries_job "$pid" "$AWL_JOB_ID"
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
[ -f "$d/exit" ] && stop_kept
# The command's group, when its leader is certainly the job's command; and the job's other processes (step 3).
grp=0
why="the command's process group is gone"
if group_alive; then
  if leader_is_command; then
    grp=1
  else
    case $why in *" is gone") why="the command has exited ($why); its group is not signalled" ;; esac
  fi
fi
job_pg=$pgid
pgid=''
job_procs
pgid=$job_pg
if [ "$grp" = 0 ] && [ "$awl_procs_n" = 0 ]; then
  case $why in *" is gone" | *"not signalled") say none "$why" ;; esac
  say refused "process ${pgid:-$pid} is not certainly this job's command ($why); not signalling it"
fi
what_grp="no process group"
[ "$grp" = 0 ] || what_grp="process group ${pgid:-(none) pid $pid}"
now=$(date +%s)
t=''
what=stopping
if [ -f "$d/timed_out" ]; then
  { read -r t <"$d/timed_out"; } 2>/dev/null
elif (set -C && printf '%s\n' "$now" >"$d/cancelled") 2>/dev/null; then
  note "the wrapper is gone; sending TERM to $what_grp and the job's other processes:$awl_procs; KILL after $g s"
  [ "$grp" = 0 ] || signal_group TERM
  # each process of the job outside the group gets its own one TERM
  for x in $awl_procs; do
    if [ "$grp" = 1 ] && { [ "$x" = "$pid" ] || { awl_proc_stat "$x" && [ "$awl_pg" = "$pgid" ]; }; }; then continue; fi
    kill -TERM "$x" 2>/dev/null
  done
  t=$now
  what=signalled
else
  { read -r t <"$d/cancelled"; } 2>/dev/null
fi
case $t in '' | *[!0-9]*) t=$now ;; esac
watch_kill $((t + g)) "$grp"
if [ "$what" = signalled ]; then
  say signalled "the wrapper is gone; sent TERM to $what_grp and $awl_procs_n other process(es) of the job, KILL after $g s"
fi
say stopping "the wrapper is gone; $what_grp and the job's other processes were sent TERM earlier, KILL after $g s"
