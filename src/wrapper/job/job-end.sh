# --- The whole job ----------------------------------------------------------------------------------------------
# Every process the command starts is the job's (src/wrapper/tracking.sh says how they are found: the job's cgroup,
# or AWAITLESS_JOB_ID in their environment plus the command's group and session). The command's end decides the
# result; what it left running is then listed in the file `leftovers` (`PID COMMAND` lines, the first 20) and stopped:
# TERM (the group as one, each other process on its own), AWL_GRACE seconds, KILL. With AWL_KEEP_LEFTOVERS=1 a
# command that ended by itself keeps them running: the exit record says `leftovers_action=kept`, its queue slot stays
# held until they are gone, and a client's cancel (cancel.sh) stops them later. On cancel and timeout the monitor's
# one TERM goes to the group and to every process of the job outside it, and its KILL to all of them. The exit
# record says how many there were (leftovers=), what became of them (leftovers_action=), how they were tracked
# (tracking=cgroup | environment) and what the job cost (awl_usage: cpu_user_us cpu_system_us max_rss_bytes
# oom_kills, resources=cgroup | rusage).
# shellcheck shell=sh

# awl_job_end (main wrapper, right after the command exited, in the job directory): lists what the command left,
# stops the monitor (which finishes a kill in progress), then stops the rest (or keeps it), and measures the job.
awl_job_end() {
  # the monitor first: it starts no kill from now on (one in progress it finishes)
  : >monitor.stop
  # USR1 cuts its nap short; a monitor that has not set its trap yet would die of it, and sees the file anyway
  ! awl_catches "$awl_mon" 10 || kill -USR1 "$awl_mon" 2>/dev/null
  awl_mon_waited=0
  if [ -f timed_out ] || [ -f cancelled ]; then
    # a kill in progress (cancel, timeout) stops the whole job: what it stops is not left over. The monitor finishes
    # it (the TERM's grace until nothing lives, else KILL) before anything is counted; a process still dying from the
    # TERM when the command's shell is gone would otherwise be listed as a leftover
    wait "$awl_mon"
    awl_mon_waited=1
  fi
  awl_exclude="$awl_wrapper_pid $awl_mon"
  awl_job_scan tracked.ls
  awl_left_n=$awl_procs_n awl_left_action=stopped
  if [ "$awl_left_n" -gt 0 ]; then
    awl_lines=$(awl_procs_list)
    awl_put leftovers "$awl_lines" 2>/dev/null || { rm -f leftovers.tmp; : >no_space; }
    awl_desc=1
  fi
  # Nothing left running to write to the logs, and no log cap for the monitor to apply (none set, or no size check
  # begun yet: `checked` is touched before each, and the first never rotates a log, monitor.sh): the exit record's
  # sizes are listed while the monitor stops (awl_stat reads that listing).
  if [ "$awl_left_n" = 0 ] && { [ "$awl_cap" = 0 ] || [ ! -e checked ]; }; then
    awl_list_sizes exit.ls background
  fi
  [ "$awl_mon_waited" = 1 ] || wait "$awl_mon"
  awl_exclude="$awl_wrapper_pid"
  awl_killed=0
  [ ! -f timed_out ] && [ ! -f cancelled ] || awl_killed=1
  if [ "$awl_left_n" -gt 0 ] && [ "$awl_killed" = 0 ] && [ "${AWL_KEEP_LEFTOVERS:-0}" = 1 ]; then
    awl_left_action=kept
    awl_log "the command left $awl_left_n process(es) running; kept (AWL_KEEP_LEFTOVERS):$awl_procs"
  elif [ "$awl_killed" = 1 ]; then
    # after a cancel or a timeout everything had its TERM and its grace from the monitor: what is left gets KILL
    awl_job_scan tracked.ls
    awl_job_stop 0 1 tracked.ls
  elif [ "$awl_left_n" -gt 0 ]; then
    awl_log "the command left $awl_left_n process(es) running; stopping them:$awl_procs"
    awl_job_stop "$AWL_GRACE" 0 tracked.ls
  fi
  awl_usage "$awl_ru0" "$awl_rs0" "$awl_ru1" "$awl_rs1"
  awl_end_fields
}

# awl_end_fields: sets awl_endf to the exit record's lines about the whole job (each after a newline), for awl_finish.
awl_end_fields() {
  awl_endf="
leftovers=${awl_left_n:-0}
leftovers_action=${awl_left_action:-stopped}"
  # how long the command ran, on the monotonic clock (centiseconds): readers add it to started's precise time
  [ -z "${awl_end_cs-}" ] || awl_endf="$awl_endf
ran_cs=$((awl_end_cs - awl_started_cs))"
  [ -z "${awl_trk-}" ] || awl_endf="$awl_endf
tracking=$awl_trk"
  [ -z "${awl_res_src-}" ] || awl_endf="$awl_endf
resources=$awl_res_src
cpu_user_us=$awl_cpu_u
cpu_system_us=$awl_cpu_s
max_rss_bytes=$awl_rss
oom_kills=$awl_oom"
}

# awl_q_keep: the queue slot of a job that kept processes running stays held while they live: it says so (kept=1,
# and the job's cgroup when it has one) for awl_q_entry_alive.
awl_q_keep() {
  { cat "$awl_q_slot" && printf '%s\n' "kept=1" "cgroup=${awl_cg_track-}"; } >"$awl_q_root/tmp/$AWL_JOB_ID" 2>/dev/null &&
    mv -f "$awl_q_root/tmp/$AWL_JOB_ID" "$awl_q_slot"
}

