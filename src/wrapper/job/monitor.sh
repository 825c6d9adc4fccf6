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
# Naps are in fractions of a second until sleep(1) refuses one (it then fails at once, status 1, where the nap would
# have been slept): whole seconds from then on (awl_frac=0, awl_short=1). No probe: it would cost every job a process.
awl_nap() {
  if [ "$awl_done" = 1 ] || [ -f monitor.stop ]; then
    # (the command has ended, with no kill under way: the loop stops at once)
    [ "$awl_kill" = none ] || sleep "$awl_short" 2>/dev/null || { awl_frac=0 awl_short=1 && sleep 1; }
    return
  fi
  if [ "$awl_frac" != 0 ]; then
    awl_f=$(($1 % 100))
    [ "$awl_f" -ge 10 ] || awl_f=0$awl_f
    awl_s=$(($1 / 100)).$awl_f
  else
    awl_s=$((($1 + 99) / 100))
  fi
  awl_sleep "$awl_s"
  if [ "$awl_slept" = 1 ] && [ "$awl_woke" = 0 ] && [ "$awl_frac" != 0 ]; then
    awl_frac=0 awl_short=1
    awl_sleep $((($1 + 99) / 100))
  fi
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
  awl_kill=term
  awl_kill_at=$((now + $2))
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
#
# Its state, which only the monitor's own subshell holds (times in centiseconds of awl_clock unless said):
#   the command      pid pgid pid_start awl_mpid: from `started` (awl_read_started), read until it is there
#   the time         awl_cs, and now (epoch seconds): taken at each wake-up
#   the streams      sz_* (the last awl_stat), o_drop e_drop (bytes the log cap let go); awl_out awl_err awl_prog
#                    and awl_changed_at (epoch seconds): what the heartbeat says; awl_changed: this wake-up saw growth
#   the schedule     awl_check_at and awl_gap (the next size check and the back-off), awl_hb_at (the last heartbeat),
#                    awl_timeout_at, awl_force (the next wake-up checks: after the start's check found a stream
#                    over the log cap, or a rotation was postponed: awl_cap_retry, log-cap.sh), awl_first (no check
#                    yet); and the lengths awl_tick awl_hb awl_cmax
#   a kill           awl_kill (none, term, killed or done) and awl_kill_at (epoch seconds: its KILL is due)
#   the nap          awl_done (the command has ended), awl_woke and awl_nap_pid (clock.sh)
awl_monitor() {
  awl_done=0 awl_woke=0 awl_nap_pid='' awl_frac='' awl_short=0.1
  trap 'awl_done=1; awl_wake' USR1
  # A client's cancel: look at the cancel file now instead of at the end of the nap.
  trap awl_wake USR2
  awl_monitor_init
  while :; do
    # The command has ended and no kill is under way: nothing is left to watch (a quick command's monitor stops here
    # before its first check: the exit record has the sizes, and the main wrapper waits for this monitor).
    if [ -f monitor.stop ] && [ "$awl_kill" = none ]; then break; fi
    [ -n "$pid" ] || awl_read_started
    kill -0 "$awl_wrapper_pid" 2>/dev/null || exit 0
    awl_clock
    awl_epoch
    now=$awl_t
    awl_changed=0
    if awl_check_due; then
      awl_quiet || awl_check
      awl_check_next
    fi
    awl_kill_step
    # the command ended during this wake-up's check: no heartbeat (the exit record follows; the main wrapper waits)
    [ ! -f monitor.stop ] || awl_done=1
    if [ "$awl_done" = 1 ] && [ "$awl_kill" != term ]; then
      [ "$awl_kill" = killed ] && awl_reap_wait
      break
    fi
    if [ "$awl_changed" = 1 ] || awl_heartbeat_due; then awl_heartbeat; fi
    awl_next_wake
    awl_nap "$awl_w"
  done
}

# awl_monitor_init: the monitor's state at its start (see awl_monitor).
awl_monitor_init() {
  pid='' pgid='' awl_kill=none awl_kill_at=0 o_drop=0 e_drop=0 now=$awl_started_at
  sz_out=0 sz_err=0 sz_prog=0 sz_outp=0 sz_errp=0
  awl_out=0 awl_err=0 awl_prog=0 awl_changed_at=$awl_started_at
  awl_tick=$((AWL_TICK * 100)) awl_hb=$((AWL_HEARTBEAT * 100)) awl_cmax=$((AWL_CHECK_MAX * 100))
  # The start's check (and first heartbeat) comes a fifth of a second after the start (a tick, when shorter): a
  # command that ends sooner costs its monitor no listing and no heartbeat, which would compete with its start and
  # end for the machine; one that writes at once is seen growing then. The first quiet check comes 4 ticks after the
  # start's (2 ticks before it doubles): a quiet job pays one wake-up fewer in its first seconds.
  awl_first_at=20
  [ "$awl_tick" -ge 20 ] || awl_first_at=$awl_tick
  awl_gap=$((awl_tick * 2)) awl_check_at=$((awl_started_cs + awl_first_at)) awl_force=0 awl_first=1 awl_cap_retry=0
  awl_hb_at=$((awl_check_at - awl_hb))
  awl_timeout_at=$((awl_started_cs + AWL_TIMEOUT * 100))
}

# awl_check_due: is a size check due at awl_cs (its time, or the heartbeat's, has come, or it is forced)?
awl_check_due() {
  [ "$awl_cs" -ge "$awl_check_at" ] || awl_heartbeat_due || [ "$awl_force" = 1 ]
}

# awl_heartbeat_due: has AWL_HEARTBEAT passed since the last heartbeat?
awl_heartbeat_due() { [ $((awl_cs - awl_hb_at)) -ge "$awl_hb" ]; }

# awl_check: the size check: lists the sizes (awl_stat), rotates a stream over the log cap (not on the first
# check), and sets awl_changed when the bytes written or the progress file's size changed since the last one.
awl_check() {
  : >checked 2>/dev/null
  awl_stat
  # Not on the first pass, at the command's start: copy-then-truncate loses what the command writes between
  # the copy and the truncate (see "Log cap" atop wrapper.sh), and a start is when a burst is most likely under way.
  # The next check then rotates (it is forced, so a command that went quiet meanwhile is not skipped).
  if [ "$awl_cap" -gt 0 ] && [ "$awl_first" = 0 ]; then awl_cap_trim "$awl_rotate_at"; fi
  if [ $((o_drop + sz_outp + sz_out)) -ne "$awl_out" ] || [ $((e_drop + sz_errp + sz_err)) -ne "$awl_err" ] ||
    [ "$sz_prog" -ne "$awl_prog" ]; then
    awl_out=$((o_drop + sz_outp + sz_out)) awl_err=$((e_drop + sz_errp + sz_err)) awl_prog=$sz_prog
    awl_changed_at=$now awl_changed=1
  fi
}

# awl_check_next: when the next size check is due (awl_check_at): AWL_TICK after a check that saw growth or had to
# postpone a rotation (then forced: it runs even if nothing changes meanwhile), else the gap doubled up to
# AWL_CHECK_MAX; a quiet check due at most half a gap before the heartbeat waits for it, so one
# wake-up does both (the backing-off checks otherwise land just short of the heartbeat's, one more `sleep` fork each).
awl_check_next() {
  if [ "$awl_changed" = 1 ] || [ "$awl_cap_retry" = 1 ]; then
    awl_gap=$awl_tick
  else
    awl_gap=$((awl_gap * 2))
    [ "$awl_gap" -le "$awl_cmax" ] || awl_gap=$awl_cmax
    [ "$awl_gap" -ge "$awl_tick" ] || awl_gap=$awl_tick
  fi
  awl_check_at=$((awl_cs + awl_gap))
  if [ "$awl_changed" = 0 ] && [ "$awl_cap_retry" = 0 ] && [ $((awl_hb_at + awl_hb)) -gt "$awl_check_at" ] &&
    [ $((awl_hb_at + awl_hb - awl_check_at)) -le $((awl_gap / 2)) ]; then
    awl_check_at=$((awl_hb_at + awl_hb))
  fi
  awl_force=$awl_cap_retry awl_cap_retry=0
  if [ "$awl_first" = 1 ]; then
    awl_first=0
    { [ "$sz_out" -gt "$awl_rotate_at" ] || [ "$sz_err" -gt "$awl_rotate_at" ]; } && awl_force=1
  fi
}

# awl_kill_step: starts a kill when the timeout is due or `cancel` is there (never once the command has ended: what
# it left is the main wrapper's, awl_job_end), and carries one on: done once nothing of the job lives, KILL when
# its grace is over.
awl_kill_step() {
  if [ "$awl_kill" = none ] && [ -n "$pid" ] && [ ! -f monitor.stop ]; then
    if [ "$AWL_TIMEOUT" -gt 0 ] && [ "$awl_cs" -ge "$awl_timeout_at" ]; then
      awl_begin_kill timed_out "$AWL_GRACE"
    elif [ -f cancel ]; then
      awl_g=''
      { read -r awl_g <cancel; } 2>/dev/null
      case $awl_g in '' | *[!0-9]*) awl_g=$AWL_GRACE ;; esac
      awl_begin_kill cancelled "$awl_g"
    fi
  fi
  [ "$awl_kill" = term ] || return 0
  if ! awl_job_alive; then
    awl_kill='done'
  elif [ "$now" -ge "$awl_kill_at" ]; then
    awl_log "grace period over: sending KILL to process group ${pgid:-(none) pid $pid}"
    awl_signal_group KILL
    awl_kill_escaped KILL
    awl_kill=killed
  fi
}

# awl_heartbeat: the heartbeat record (a full disk: the no_space marker instead).
awl_heartbeat() {
  { awl_put heartbeat "now=$now" "out=$awl_out" "err=$awl_err" "progress=$awl_prog" \
    "last_change=$awl_changed_at" "interval=$AWL_HEARTBEAT"; } 2>/dev/null || { rm -f heartbeat.tmp; : >no_space; }
  awl_hb_at=$awl_cs
}

# awl_next_wake: sets awl_w to the centiseconds until the next thing due (at least 1): the size check, the heartbeat,
# the timeout; each AWL_TICK while a kill is in progress or under Slurm (for `cancel`); soon while the command's pid
# is not known yet (`started` comes a moment after the monitor starts).
awl_next_wake() {
  awl_w=$awl_check_at
  [ $((awl_hb_at + awl_hb)) -ge "$awl_w" ] || awl_w=$((awl_hb_at + awl_hb))
  if [ "$awl_kill" = none ] && [ "$AWL_TIMEOUT" -gt 0 ] && [ "$awl_timeout_at" -lt "$awl_w" ]; then
    awl_w=$awl_timeout_at
  fi
  if [ "$awl_kill" = term ] || [ "$AWL_SCHEDULER" = slurm ]; then
    [ $((awl_cs + awl_tick)) -ge "$awl_w" ] || awl_w=$((awl_cs + awl_tick))
  fi
  [ -n "$pid" ] || [ $((awl_cs + 20)) -ge "$awl_w" ] || awl_w=$((awl_cs + 20))
  awl_w=$((awl_w - awl_cs))
  [ "$awl_w" -ge 1 ] || awl_w=1
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

