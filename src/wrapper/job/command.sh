# The command: the process that becomes it (joins the job's cgroup, writes `started`, execs it), the wrapper's wait for
# it in the foreground, how it ended, and `started` read back by the wrapper and its monitor (forged values refused).
# A fragment of wrapper.sh.
# shellcheck shell=sh
# awl_read_started: sets pid, pgid and pid_start from the started file when it exists. A record naming pid or pgid
# 0 or 1 (or not a number) is refused (kill -1 would signal every process): nothing is set, it is logged once.
awl_read_started() {
  [ -f started ] || return 1
  pid_start=''
  while IFS='=' read -r awl_k awl_v; do
    case $awl_k in
    pid) pid=$awl_v ;;
    pgid) pgid=$awl_v ;;
    pid_start) pid_start=$awl_v ;;
    monitor_pid) awl_mpid=$awl_v ;;
    tracking) awl_trk=$awl_v ;;
    esac
  done <started
  # the command could not join its cgroup: its processes are tracked by their environment
  [ "${awl_trk-}" != environment ] || awl_cg_track='' awl_cg_cpu='' awl_cg_mem=''
  case $pid/$pgid in
  */*[!0-9]* | */0* | */1 | *[!0-9]*/* | 0*/* | 1/* | /*)
    [ -n "$awl_bad_started" ] || awl_log "started names pid '$pid' pgid '$pgid'; refusing to signal them"
    awl_bad_started=1 pid='' pgid=''
    return 1
    ;;
  esac
  [ -n "$pid" ]
}


# awl_run ARGV...: runs the command in the foreground (so that it keeps default SIGINT/SIGQUIT handling: sh ignores both
# in background jobs when job control is off) and waits for it: sets awl_code (its status), awl_end_cs, awl_cmd_end
# (its end on both clocks) and awl_ru1, awl_rs1 (the CPU time of the wrapper's children since). Not a process-group
# leader (no job control), the command's process has setsid(1) call setsid() without forking: the exec'd command keeps
# its pid and leads its own session and group (pgid = pid). Without setsid, job control (`set -m`, works in bash) gives
# it its own group; otherwise pgid is empty and only pid is signalled.
awl_run() {
  if [ -n "$awl_setsid" ]; then
    set -- "$awl_setsid" "$@"
    awl_group=1
  else
    awl_group=0
    set -m 2>/dev/null
    case $- in *m*) awl_group=1 ;; esac
  fi
  (awl_command "$@")
  awl_code=$?
  case $awl_code in 126 | 127) awl_interp_note "$@" ;; esac
  awl_clock
  awl_end_cs=$awl_cs
  awl_ru1='' awl_rs1=''
  awl_ticks "$$" && awl_ru1=$awl_cu awl_rs1=$awl_csy
  awl_epoch
  awl_cmd_end=$awl_t
  set +m 2>/dev/null
}

# awl_interp_note [setsid] ARGV... (the command ended 126 or 127): a script named by its path whose #! line the kernel
# could not follow fails with only "No such file or directory" (setsid's words, naming setsid): says why on the job's
# stderr when its first line ends in a carriage return (Windows line endings) or names an interpreter that is not
# there. Nothing for a script that ran and ended so itself (its interpreter exists), nor for anything else.
awl_interp_note() {
  if [ -n "$awl_setsid" ]; then awl_c=$2; else awl_c=$1; fi
  case $awl_c in */*) ;; *) return 0 ;; esac
  [ -f "$awl_c" ] && [ -x "$awl_c" ] || return 0
  # its first line (at most 256 bytes: a binary need not have a newline anywhere near its start)
  awl_l=$(LC_ALL=C dd if="$awl_c" bs=256 count=1 2>/dev/null)
  awl_nl='
' awl_cr=$(printf '\r')
  awl_l=${awl_l%%"$awl_nl"*}
  case $awl_l in '#!'*) ;; *) return 0 ;; esac
  awl_i=${awl_l#??}
  awl_i=${awl_i#"${awl_i%%[! 	]*}"}
  awl_i=${awl_i%%[ 	]*}
  case $awl_l in
  *"$awl_cr")
    printf 'awaitless: cannot run %s: its first line ends in a carriage return (Windows line endings); convert it with %s %s\n' \
      "$awl_c" "sed -i 's/\r\$//'" "$awl_c" >>"$awl_dir/stderr"
    ;;
  *)
    [ -n "$awl_i" ] && [ ! -e "$awl_i" ] || return 0
    printf 'awaitless: cannot run %s: the interpreter its first line names, %s, does not exist on this host\n' \
      "$awl_c" "$awl_i" >>"$awl_dir/stderr"
    ;;
  esac
} 2>/dev/null

# awl_command [setsid] ARGV... (in the subshell that becomes the command): reads its own pid and start time, marks
# the queue slot, joins the job's cgroups, writes `started` (no room: exit 126, the command never runs), sets the
# command's environment, streams and umask, and execs it.
awl_command() {
  [ "$awl_ext_term" = 0 ] || exit 143
  awl_cmd_start=''
  if [ -r /proc/self/stat ]; then
    read -r awl_l </proc/self/stat
    awl_pid=${awl_l%% *}
    # This process becomes the command (setsid and exec keep the pid): its start time tells it from a reused pid.
    awl_stat_line "$awl_l"
    awl_cmd_start=$awl_start
  else
    awl_pid=$(exec sh -c 'echo "$PPID"')
  fi
  awl_pgid=''
  [ "$awl_group" = 1 ] && awl_pgid=$awl_pid
  [ -z "$awl_q_slot" ] || awl_q_mark_running "$awl_pid" "$awl_pgid"
  # the command's own process joins the job's cgroup before anything of the command runs
  awl_track_join "$awl_pid" || {
    awl_log "could not join cgroup $awl_cg_track; tracking by environment"
    awl_trk=environment awl_cg_track=''
  }
  awl_put "$awl_dir/started" "protocol=1" "wrapper_pid=$awl_wrapper_pid" "monitor_pid=$awl_mon" "pid=$awl_pid" "pgid=$awl_pgid" \
    "boot_id=$awl_boot_id" "proc_start=$awl_proc_start" "pid_start=$awl_cmd_start" "started_at=$awl_started_at" \
    "tracking=$awl_trk" "cgroup=$awl_cg_track" "cgroups=${awl_cg_dirs# }" 2>/dev/null || {
    rm -f "$awl_dir/started.tmp"
    exit 126
  }
  export AWAITLESS_JOB_ID="$AWL_JOB_ID" AWAITLESS_JOB_DIR="$awl_dir" AWAITLESS_PROGRESS_FILE="$awl_dir/progress"
  [ -z "$AWL_QUEUE" ] || export AWAITLESS_QUEUE="$AWL_QUEUE"
  if [ -n "$AWL_RESOURCES" ]; then
    awl_csv=''
    for awl_r in $AWL_RESOURCES; do awl_csv=${awl_csv:+$awl_csv,}$awl_r; done
    export AWAITLESS_RESOURCES="$awl_csv"
  fi
  exec </dev/null >>"$awl_dir/stdout" 2>>"$awl_dir/stderr"
  umask "$awl_umask"
  awl_env
  # A command that is not there is said to be so by name (setsid's own words would name setsid).
  if [ -n "$awl_setsid" ]; then awl_c=$2; else awl_c=$1; fi
  command -v "$awl_c" >/dev/null 2>&1 || {
    printf 'awaitless: command not found: %s\n' "$awl_c" >&2
    exit 127
  }
  # So is a file named by its path that cannot be run as a program (126, as a shell says it): a directory, or one
  # without the execute permission (a script that was never made executable).
  case $awl_c in
  */*)
    if [ -d "$awl_c" ]; then
      printf 'awaitless: cannot execute %s: it is a directory\n' "$awl_c" >&2
      exit 126
    elif [ ! -x "$awl_c" ]; then
      printf 'awaitless: cannot execute %s: permission denied (make it executable: chmod +x %s; or run it through its interpreter: sh %s)\n' \
        "$awl_c" "$awl_c" "$awl_c" >&2
      exit 126
    fi
    ;;
  esac
  exec "$@"
}

# awl_outcome (the main wrapper, after awl_job_end): the exit record's reason (awl_reason); without `started`, which is
# written just before the exec, the command never ran (cancelled during start-up, or no room to record its start).
awl_outcome() {
  if [ ! -f started ]; then
    if [ "$awl_ext_term" = 1 ] || [ -f cancelled ] || [ -f cancel ]; then
      awl_log "cancelled before the command started; it never ran"
      awl_finish '' cancelled
    fi
    awl_launch_failed "could not write '$awl_dir/started' (disk full?); the command was not started"
  fi
  awl_reason=exited
  if [ -f timed_out ]; then
    awl_reason=timed_out
  elif [ -f cancelled ] || { [ "$awl_ext_term" = 1 ] && [ -f cancel ]; }; then
    awl_reason=cancelled
  fi
}
