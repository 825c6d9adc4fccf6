# The wrapper's start, before the command: the job directory entered and made safe to write, spec.sh's settings
# checked, the wrapper's identity, the wait for the job's turn (dependencies, queue), its clocks and its working
# directory. A fragment of wrapper.sh, whose main part calls these in order.
# shellcheck shell=sh

# awl_enter JOB_DIR: enters the job directory (a relative one from the directory the wrapper started in) and removes a
# symlink found under a name the wrapper writes (files here are untrusted: it would have the wrapper write elsewhere);
# sets awl_start_dir, awl_dir and the defaults of spec.sh's optional settings.
awl_enter() {
  awl_start_dir=$PWD
  case $1 in
  '')
    awl_log "usage: sh wrapper.sh JOB_DIR (the job directory holding spec.sh)"
    exit 2
    ;;
  /*) awl_dir=$1 ;;
  *) awl_dir=$awl_start_dir/$1 ;;
  esac
  cd "$awl_dir" || {
    awl_log "cannot enter job directory '$awl_dir'; create it (0700) with spec.sh inside"
    exit 2
  }
  awl_cap=0 awl_q_slot='' awl_q_entry='' awl_q_root='' awl_ext_term=0 awl_bad_started='' awl_a_failed='' awl_a_dir=''
  for awl_f in stdout stderr progress exit.tmp exit started heartbeat no_space monitor.stop leftovers tracked.ls tracked.mon exit.ls; do
    [ ! -h "$awl_f" ] || { rm -f "$awl_f" && awl_log "removed the symlink $awl_dir/$awl_f; the wrapper writes it"; }
  done
  AWL_QUEUE='' AWL_RESOURCES='' AWL_QUEUE_DIR='' AWL_QUEUE_LOCK='' AWL_SCHEDULER='' AWL_AFTER_N=0 AWL_AFTER_FAILED=''
  AWL_ATTEMPT=1 AWL_RETRY_LEFT=0 AWL_RETRY_ON='' awl_root=$awl_dir
}

# awl_spec_checked ARGC (after spec.sh was sourced; ARGC: how many words its `set --` gave): its numbers checked and
# defaulted, the log cap's sizes, a retried attempt's first directory (awl_root); no command: launch failed.
awl_spec_checked() {
  awl_number AWL_TIMEOUT 0
  awl_number AWL_GRACE 10
  awl_number AWL_TICK 1
  awl_number AWL_HEARTBEAT 30
  awl_number AWL_CHECK_MAX 15
  awl_number AWL_LOG_CAP 0
  awl_number AWL_QUEUE_CONCURRENCY 1
  awl_number AWL_AFTER_N 0
  awl_number AWL_ATTEMPT 1
  awl_number AWL_RETRY_LEFT 0
  [ "$AWL_ATTEMPT" -le 1 ] || awl_root=${awl_dir%/attempts/"$AWL_ATTEMPT"}
  [ "$AWL_QUEUE_CONCURRENCY" -gt 0 ] || awl_launch_failed "AWL_QUEUE_CONCURRENCY=0 in spec.sh; a queue admits at least 1 job"
  [ "$AWL_TICK" -gt 0 ] || AWL_TICK=1
  [ "$AWL_HEARTBEAT" -gt 0 ] || AWL_HEARTBEAT=1
  [ "$AWL_CHECK_MAX" -ge "$AWL_TICK" ] || AWL_CHECK_MAX=$AWL_TICK
  awl_cap=$AWL_LOG_CAP
  awl_headcap=$((awl_cap / 8))
  awl_tailcap=$((awl_cap - awl_headcap))
  awl_rotate_at=$((awl_tailcap / 2))
  [ "$1" -gt 0 ] || awl_launch_failed "spec.sh sets no command (set -- argv...)"
}

# awl_number NAME DEFAULT: validate a non-negative integer setting from spec.sh.
awl_number() {
  eval "awl_v=\${$1:-$2}"
  case $awl_v in '' | *[!0-9]*) awl_launch_failed "$1='$awl_v' in spec.sh is not a non-negative integer" ;; esac
  eval "$1=\$awl_v"
}

# awl_identity: the records' names for this wrapper: awl_wrapper_pid, awl_boot_id, awl_proc_start (its start time).
# A Slurm requeue runs this script again in the same directory: the earlier run's records are kept as NAME.earlier
# (readers also ignore records older than this run's start), so none is read as this run's.
awl_identity() {
  if [ "$AWL_SCHEDULER" = slurm ]; then
    for awl_f in started heartbeat exit; do
      [ ! -f "$awl_f" ] || mv -f "$awl_f" "$awl_f.earlier"
    done
  fi
  awl_wrapper_pid=$$
  awl_read_boot_id
  awl_proc_start=''
  awl_proc_stat "$$" && awl_proc_start=$awl_start
}

# awl_wait_turn: a cancel before the command starts means it never runs; dependencies hold on this machine until the
# parents' conditions hold ("Dependencies", after.sh), then queue admission waits for the job's turn ("Queue
# admission", queue.sh); the runtime timeout counts from the end of these waits. Under Slurm the wrapper outlives
# scancel's TERM (see "Cancel"); one that lands before the command starts means it never starts.
awl_wait_turn() {
  [ "$AWL_SCHEDULER" != slurm ] || trap 'awl_ext_term=1' TERM
  if [ -f cancel ] || [ "$awl_ext_term" = 1 ]; then
    awl_log "cancel requested before the command started; it never ran"
    awl_finish '' cancelled
  fi
  [ "$AWL_AFTER_N$AWL_AFTER_FAILED" = 0 ] || awl_after_hold
  if [ -n "$AWL_QUEUE$AWL_RESOURCES" ]; then
    awl_q_admit
    if [ -f cancel ]; then
      awl_log "cancel requested before the command started; it never ran"
      awl_finish '' cancelled
    fi
  fi
}

# awl_find_setsid: sets awl_setsid to the path of setsid(1) found in PATH, as `command -v` would, without the fork of
# a command substitution; not in PATH: what `command -v` says (a busybox shell's own applet), else ''.
awl_find_setsid() {
  awl_setsid=''
  awl_p=${PATH-}:
  while [ -n "$awl_p" ]; do
    awl_x=${awl_p%%:*}
    awl_p=${awl_p#*:}
    [ -n "$awl_x" ] || awl_x=.
    if [ -f "$awl_x/setsid" ] && [ -x "$awl_x/setsid" ]; then
      awl_setsid=$awl_x/setsid
      return 0
    fi
  done
  awl_setsid=$(command -v setsid 2>/dev/null)
}

# awl_start_clock: the command's start on both clocks: awl_started_cs (awl_clock; awl_up_ok=1 when /proc/uptime gives
# centiseconds) and awl_started_at (epoch seconds, for the records). The epoch comes without `date` (a process start)
# from the local launcher's reading (awl_launch_clock, from AWL_LAUNCH_CLOCK: EPOCH_CS:UPTIME_CS:BOOT_ID, both
# clocks read at the launch) plus the uptime since, when it was taken on this boot of this machine less than a minute
# ago (a longer wait, for a queue or a parent, could span a step of the system clock); else from `date`.
awl_start_clock() {
  awl_up_ok=0
  # shellcheck disable=SC2034 # awl_x: the rest of the line
  { read -r awl_u awl_x </proc/uptime; } 2>/dev/null && case $awl_u in *.[0-9][0-9]) awl_up_ok=1 ;; esac
  awl_clock
  awl_started_cs=$awl_cs
  awl_started_at=''
  awl_le=${awl_launch_clock%%:*} awl_x=${awl_launch_clock#*:}
  awl_lu=${awl_x%%:*} awl_lb=${awl_x#*:}
  case $awl_le/$awl_lu in
  */*[!0-9]* | *[!0-9]*/* | /* | */) ;;
  *)
    [ "$awl_up_ok" = 1 ] && [ -n "$awl_boot_id" ] && [ "$awl_lb" = "$awl_boot_id" ] &&
      [ "$awl_cs" -ge "$awl_lu" ] && [ $((awl_cs - awl_lu)) -lt 6000 ] &&
      awl_started_at=$(((awl_le + awl_cs - awl_lu) / 100))
    ;;
  esac
  [ -n "$awl_started_at" ] || { awl_now && awl_started_at=$awl_t; }
}

# awl_enter_cwd: changes to the command's working directory (AWL_CWD; a relative one from where the wrapper started).
awl_enter_cwd() {
  # shellcheck disable=SC2153 # AWL_CWD comes from spec.sh
  case $AWL_CWD in
  /*) awl_cwd=$AWL_CWD ;;
  *) awl_cwd=$awl_start_dir/$AWL_CWD ;;
  esac
  if ! cd "$awl_cwd"; then
    cd "$awl_dir" || exit 2
    awl_launch_failed "cannot change to working directory '$AWL_CWD'; create it or choose another cwd"
  fi
}

# awl_track_start: how the job's processes are tracked ("The whole job", job-end.sh): awl_track_setup, then awl_trk;
# and the CPU time the wrapper's children had so far (awl_ru0, awl_rs0: awl_usage subtracts it).
awl_track_start() {
  awl_track_setup
  awl_log "tracking the job's processes $awl_track_why"
  awl_trk=environment
  [ -z "$awl_cg_track" ] || awl_trk=cgroup
  awl_ru0='' awl_rs0=''
  awl_ticks "$$" && awl_ru0=$awl_cu awl_rs0=$awl_csy
}
