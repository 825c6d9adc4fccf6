# The monitor (wrapper.sh "Cancel"): the wrapper's child that watches the command while it runs: size checks (and the
# log cap), heartbeats, the timeout, a cancel, and the kill that follows, one TERM then KILL after the grace. A
# fragment of wrapper.sh; uses files.sh, log-cap.sh, started.sh, prelude.sh and tracking.sh.
# shellcheck shell=sh
# awl_signal_group SIG: signal the whole group (or the command alone when it has no group of its own), unless the
# group's leader is alive with another start time than the command's (pid_start): a pid reused, or a forged record.
awl_signal_group() {
  if [ -n "$pid_start" ] && { read -r awl_l <"/proc/$pid/stat"; } 2>/dev/null; then
    awl_stat_line "$awl_l"
    if [ "$awl_start" != "$pid_start" ]; then
      awl_log "process $pid started at $awl_start, the command at $pid_start; not signalling it"
      return 1
    fi
  fi
  if [ -n "$pgid" ]; then
    kill -"$1" -"$pgid" 2>/dev/null
  elif [ -n "$pid" ]; then
    kill -"$1" "$pid" 2>/dev/null
  fi
}

# awl_nap CENTISECONDS: the monitor's nap (awl_sleep), which USR1 from the main wrapper (the command ended) and USR2
# from a client (a cancel) end at once. Once the command has exited the monitor only naps while a kill is in progress
# (the group still alive): a short nap then, not none, or it would spin for the whole grace period.
awl_nap() {
  if [ "$awl_done" = 1 ] || [ -f monitor.stop ]; then
    sleep "$awl_short" 2>/dev/null
    return
  fi
  if [ "$awl_frac" = 1 ]; then
    awl_f=$(($1 % 100))
    [ "$awl_f" -ge 10 ] || awl_f=0$awl_f
    awl_s=$(($1 / 100)).$awl_f
  else
    awl_s=$((($1 + 99) / 100))
  fi
  awl_sleep "$awl_s"
  awl_woke=0
}

# awl_quiet: nothing was written to stdout, stderr or progress since the last size check, as far as their mtimes
# tell without a fork (`checked` is touched before each check; a write in the same mtime granule, one second for
# busybox's test, counts as a change). Only then may a check skip its `ls`.
awl_quiet() {
  # shellcheck disable=SC3013 # -nt: dash, bash and busybox sh all have it
  [ "$awl_force" = 0 ] && [ checked -nt stdout ] && [ checked -nt stderr ] &&
    { [ ! -e progress ] || [ checked -nt progress ]; }
}

# awl_begin_kill MARKER GRACE: record why, then TERM the whole job (the group, and each of its processes outside
# the group: awl_kill_escaped); KILL follows GRACE seconds later.
awl_begin_kill() {
  awl_put "$1" "$now"
  awl_log "$1: sending TERM to process group ${pgid:-(none) pid $pid}, KILL after $2 s"
  awl_signal_group TERM
  awl_kill_escaped TERM
  kstate=term
  kdeadline=$((now + $2))
}

# awl_kill_escaped SIG (the monitor, during a kill): SIG to the job's processes outside the command's group (TERM:
# once, with the group's TERM; KILL: to every process of the job, the cgroup's at once where it can).
awl_kill_escaped() {
  awl_exclude="$awl_wrapper_pid ${awl_mpid-}"
  awl_job_scan tracked.mon
  if [ "$1" = KILL ]; then
    awl_kill_all
  else
    awl_signal_procs "$1" out
  fi
  [ "$awl_procs_n" = 0 ] || awl_log "$1 to the job's processes:$awl_procs"
}

# awl_job_alive (the monitor, during a kill): does the command's group, or any other process of the job, live?
awl_job_alive() {
  awl_group_alive "$pid" "$pgid" && return 0
  awl_exclude="$awl_wrapper_pid ${awl_mpid-}"
  awl_job_scan tracked.mon
  [ "$awl_procs_n" -gt 0 ]
}

# The monitor. It sleeps until the next thing due, whichever comes first: a size check of the streams and the
# progress file (AWL_TICK after a check that saw growth, then backing off by doubling up to AWL_CHECK_MAX while
# nothing changes), the heartbeat (when a check saw a change, else every AWL_HEARTBEAT), the timeout's deadline,
# the KILL of a kill in progress (checked each AWL_TICK). A client's cancel wakes it with USR2; under Slurm, where
# nobody can signal it, it looks for `cancel` every AWL_TICK. The log cap is enforced at each check. When the command
# has exited the main wrapper creates `monitor.stop` and sends USR1; the monitor then finishes a kill in progress
# and stops. The file is what counts: bash (5.2) can fail to run a trap whose signal lands while it parses a
# command substitution ("trap: unexpected EOF while looking for matching `)'"), so the signal only saves time,
# and the loop itself uses no command substitution while the command runs.
awl_monitor() {
  awl_done=0 awl_woke=0 awl_nap_pid='' awl_frac=0 awl_short=1
  if sleep 0.01 2>/dev/null; then awl_frac=1 awl_short=0.1; fi
  trap 'awl_done=1; awl_wake' USR1
  # A client's cancel: look at the cancel file now instead of at the end of the nap.
  trap awl_wake USR2
  pid='' pgid='' kstate=none kdeadline=0 o_drop=0 e_drop=0 now=$awl_started_at
  sz_out=0 sz_err=0 sz_prog=0 sz_outp=0 sz_errp=0
  last_out=0 last_err=0 last_prog=0 last_change=$awl_started_at
  awl_tick=$((AWL_TICK * 100)) awl_hb=$((AWL_HEARTBEAT * 100)) awl_cmax=$((AWL_CHECK_MAX * 100))
  # the first quiet check comes 4 ticks after the start's (2 ticks before it doubles): a job that writes at once is
  # seen growing by the start's check, and a quiet one pays one wake-up fewer in its first seconds
  awl_gap=$((awl_tick * 2)) awl_next_check=0 awl_hb_cs=-$awl_hb awl_force=1 awl_first=1
  awl_deadline=$((awl_started_cs + AWL_TIMEOUT * 100))
  while :; do
    [ -n "$pid" ] || awl_read_started
    kill -0 "$awl_wrapper_pid" 2>/dev/null || exit 0
    awl_clock
    awl_epoch
    now=$awl_t
    awl_changed=0
    if [ "$awl_cs" -ge "$awl_next_check" ] || [ $((awl_cs - awl_hb_cs)) -ge "$awl_hb" ] || [ "$awl_force" = 1 ]; then
      if awl_quiet; then
        :
      else
        : >checked 2>/dev/null
        awl_stat
        # Not on the first pass, at the command's start: copy-then-truncate loses what the command writes between
        # the copy and the truncate (see "Log cap" atop wrapper.sh), and a start is when a burst is most likely under way.
        # The next check then rotates (it is forced, so a command that went quiet meanwhile is not skipped).
        if [ "$awl_cap" -gt 0 ] && [ "$awl_first" = 0 ]; then
          if [ "$sz_out" -gt "$awl_rotate_at" ]; then
            awl_rotate stdout "$sz_outp" "$o_drop" "$awl_rotate_at" &&
              o_drop=$awl_drop sz_outp=$awl_prev sz_out=0
          fi
          if [ "$sz_err" -gt "$awl_rotate_at" ]; then
            awl_rotate stderr "$sz_errp" "$e_drop" "$awl_rotate_at" &&
              e_drop=$awl_drop sz_errp=$awl_prev sz_err=0
          fi
        fi
        out=$((o_drop + sz_outp + sz_out))
        err=$((e_drop + sz_errp + sz_err))
        if [ "$out" -ne "$last_out" ] || [ "$err" -ne "$last_err" ] || [ "$sz_prog" -ne "$last_prog" ]; then
          last_change=$now last_out=$out last_err=$err last_prog=$sz_prog awl_changed=1
        fi
      fi
      if [ "$awl_changed" = 1 ]; then
        awl_gap=$awl_tick
      else
        awl_gap=$((awl_gap * 2))
        [ "$awl_gap" -le "$awl_cmax" ] || awl_gap=$awl_cmax
        [ "$awl_gap" -ge "$awl_tick" ] || awl_gap=$awl_tick
      fi
      awl_next_check=$((awl_cs + awl_gap))
      # A quiet check due at most half a gap before the heartbeat waits for it: one wake-up then does both (the
      # backing-off checks otherwise land just short of the heartbeat's wake-up, one more `sleep` fork each time).
      awl_hb_due=$((awl_hb_cs + awl_hb))
      if [ "$awl_changed" = 0 ] && [ "$awl_hb_due" -gt "$awl_next_check" ] &&
        [ $((awl_hb_due - awl_next_check)) -le $((awl_gap / 2)) ]; then
        awl_next_check=$awl_hb_due
      fi
      awl_force=0
      if [ "$awl_first" = 1 ]; then
        awl_first=0
        { [ "$sz_out" -gt "$awl_rotate_at" ] || [ "$sz_err" -gt "$awl_rotate_at" ]; } && awl_force=1
      fi
    fi
    # once the command has ended (monitor.stop) no kill starts: what it left is the main wrapper's (awl_job_end)
    if [ "$kstate" = none ] && [ -n "$pid" ] && [ ! -f monitor.stop ]; then
      if [ "$AWL_TIMEOUT" -gt 0 ] && [ "$awl_cs" -ge "$awl_deadline" ]; then
        awl_begin_kill timed_out "$AWL_GRACE"
      elif [ -f cancel ]; then
        awl_g=''
        { read -r awl_g <cancel; } 2>/dev/null
        case $awl_g in '' | *[!0-9]*) awl_g=$AWL_GRACE ;; esac
        awl_begin_kill cancelled "$awl_g"
      fi
    fi
    if [ "$kstate" = term ]; then
      if ! awl_job_alive; then
        kstate='done'
      elif [ "$now" -ge "$kdeadline" ]; then
        awl_log "grace period over: sending KILL to process group ${pgid:-(none) pid $pid}"
        awl_signal_group KILL
        awl_kill_escaped KILL
        kstate=killed
      fi
    fi
    if [ "$awl_changed" = 1 ] || [ $((awl_cs - awl_hb_cs)) -ge "$awl_hb" ]; then
      { awl_put heartbeat "now=$now" "out=$last_out" "err=$last_err" "progress=$last_prog" \
        "last_change=$last_change" "interval=$AWL_HEARTBEAT"; } 2>/dev/null || { rm -f heartbeat.tmp; : >no_space; }
      awl_hb_cs=$awl_cs
    fi
    [ ! -f monitor.stop ] || awl_done=1
    if [ "$awl_done" = 1 ] && [ "$kstate" != term ]; then
      [ "$kstate" = killed ] && awl_reap_wait
      break
    fi
    # The next wake-up: the earliest of what is due.
    awl_w=$awl_next_check
    [ $((awl_hb_cs + awl_hb)) -ge "$awl_w" ] || awl_w=$((awl_hb_cs + awl_hb))
    if [ "$kstate" = none ] && [ "$AWL_TIMEOUT" -gt 0 ] && [ "$awl_deadline" -lt "$awl_w" ]; then
      awl_w=$awl_deadline
    fi
    if [ "$kstate" = term ] || [ "$AWL_SCHEDULER" = slurm ]; then
      [ $((awl_cs + awl_tick)) -ge "$awl_w" ] || awl_w=$((awl_cs + awl_tick))
    fi
    # Until `started` shows the command's pid (a moment after the monitor starts), look again soon.
    [ -n "$pid" ] || [ $((awl_cs + 20)) -ge "$awl_w" ] || awl_w=$((awl_cs + 20))
    awl_w=$((awl_w - awl_cs))
    [ "$awl_w" -ge 1 ] || awl_w=1
    awl_nap "$awl_w"
  done
}

# awl_reap_wait: after KILL, give the job's processes up to 2 s to disappear.
awl_reap_wait() {
  awl_now
  awl_until=$((awl_t + 2))
  while awl_job_alive; do
    sleep 0.05 2>/dev/null || sleep 1
    awl_now
    [ "$awl_t" -lt "$awl_until" ] || break
  done
}

