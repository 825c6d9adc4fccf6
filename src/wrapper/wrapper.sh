#!/bin/sh
# Awaitless job wrapper, protocol 1: runs one job, watches it, and records its outcome in its job directory.
# POSIX sh only (dash, bash, busybox ash) plus common utilities. The TypeScript side is src/wrapper/protocol.ts;
# docs/wrapper-protocol.md says the same as this header in more words.
#
# Usage: sh wrapper.sh JOB_DIR   (started detached, in its own session; its stdout/stderr go to JOB_DIR/wrapper.log)
#
# Files in JOB_DIR (umask 077: every file 0600; nothing is written outside JOB_DIR; the command itself gets the
# umask the wrapper was started with):
#   spec.sh        client -> wrapper, sourced with `.`: AWL_JOB_ID AWL_CWD AWL_TIMEOUT AWL_GRACE AWL_TICK
#                  AWL_HEARTBEAT [AWL_CHECK_MAX] AWL_LOG_CAP [AWL_SCHEDULER], `set -- argv...`, and awl_env() (exports applied only to
#                  the command). AWL_SCHEDULER=slurm: see "Cancel" below.
#                  Queued jobs add AWL_QUEUE AWL_QUEUE_CONCURRENCY AWL_RESOURCES AWL_QUEUE_DIR [AWL_QUEUE_LOCK]
#                  (see "Queue admission" below); the command then also gets AWAITLESS_QUEUE and AWAITLESS_RESOURCES.
#                  [AWL_KEEP_LEFTOVERS=1]: what the command leaves running is kept (see "The whole job" below).
#   cancel         client -> wrapper: grace seconds (client writes a fresh temp name, then renames). See "Cancel" below.
#   queued         key=value, queued jobs only: the wrapper's place in line while it waits, then admitted_at.
#   started        key=value: protocol wrapper_pid monitor_pid pid pgid boot_id proc_start pid_start started_at
#                  tracking cgroup cgroups (proc_start: the wrapper's, pid_start: the command's, field 22 of
#                  /proc/PID/stat; tracking: cgroup | environment; cgroup: the job's cgroup directory when by cgroup,
#                  cgroups: every cgroup directory made for it, space-separated, removed when it ends). Written
#                  (started.tmp -> mv) by the command's own process just before it execs the command, so pid is the
#                  command's pid. monitor_pid: the wrapper's monitor (a child of wrapper_pid), which a client wakes.
#   stdout stderr  the command's output, opened with >> (O_APPEND) from the first byte.
#   progress       free for the command ($AWAITLESS_PROGRESS_FILE); only its size is watched.
#   heartbeat      key=value: now out err progress last_change interval. Rewritten atomically after each size check
#                  that saw a change, else every AWL_HEARTBEAT (= interval) seconds. out/err count every byte ever
#                  written, dropped ones included; last_change is the time of the check that saw the change.
#   checked        empty, touched before each size check (its mtime says whether anything was written since).
#   monitor.ls     scratch: the `ls -ln` listing of the last size check.
#   timed_out | cancelled   marker (content: epoch seconds), written before the group is signalled: whoever finds
#                  one knows TERM went out then. A client stopping a group whose wrapper is gone claims `cancelled`
#                  with noclobber first (see "Cancel").
#   STREAM.head STREAM.prev STREAM.dropped   log cap (AWL_LOG_CAP > 0): see "Log cap" below.
#   exit           key=value: exit_code signal reason finished_at descendants_alive stdout_dropped stderr_dropped
#                  stdout_bytes stderr_bytes [no_space=1] [dependency=ID:ON] wrapper_pid proc_start leftovers
#                  leftovers_action [ran_cs] [tracking] [resources cpu_user_us cpu_system_us max_rss_bytes oom_kills]
#                  (see "The whole job"), then a line of spaces that pads it to 512 bytes. Written atomically
#                  (exit.tmp -> mv); the last file written. finished_at is when the command ended.
#   leftovers      `PID COMMAND` lines: the first 20 processes the command left running (see "The whole job").
#   leftovers.stopped   marker (content: epoch seconds): a client's cancel sent TERM to what the job kept running.
#   tracked.ls tracked.mon   scratch: the lists of the job's processes found by environment.
#   exit.tmp       the exit record's reservation: 511 spaces and a newline, written at start-up before anything else
#                  (the launcher may have written it already). At the end the record is written over those bytes
#                  in place (`1<>`, no truncation) and renamed to `exit`, so a disk or quota that the command's
#                  output filled still takes the record: rewriting allocated bytes and a rename within the
#                  directory need no new block (copy-on-write file systems excepted).
#   no_space       empty marker: a write of the wrapper's found the disk (or quota) full; the exit record then says
#                  no_space=1 (the command's own writes may have failed too). An empty file needs no block.
#   wrapper.log    the wrapper's own messages.
# Order: exit.tmp, [queued,] started, then heartbeats, then exit. Times are epoch seconds. When `started` cannot be
#   written (a full disk) the command is not started: the exit record says launch_failed.
#
# exit_code: the command's status; 128+n when it died from signal n (signal= names n, e.g. KILL). sh cannot tell
#   a command that exited 130 from one killed by SIGINT; both read exit_code=130 signal=INT.
#   126 with reason=launch_failed: JOB_DIR/spec.sh or AWL_CWD unusable, or no space for `started` (wrapper.log).
#   127: command not found (recorded as reason=exited, like a shell would). Empty with reason=cancelled: the
#   cancel file existed before the command started (or before its queue admitted it), so it never ran.
# reason: exited | timed_out | cancelled | launch_failed | dependency_failed (then dependency=ID:ON; see
#   "Dependencies" below).
# descendants_alive=1: processes of the job outlived the command (leftovers > 0): stopped, TERM then KILL after the
#   grace period, unless kept (AWL_KEEP_LEFTOVERS=1 and the command ended by itself).
#
# Cancel: the group, and each process of the job outside it, gets exactly one TERM, then KILL after the grace
#   period, and only the monitor signals them. A
#   client writes `cancel` (src/wrapper/cancel.sh is the client's half), then sends USR2 to monitor_pid so that it
#   acts now rather than at its next wake-up. The monitor sends TERM once (a second request while a kill is in progress, or
#   a timeout meanwhile, sends nothing) and KILL when the grace is over. A cancel before the command started (or
#   before its queue admitted it): the command never runs. With the wrapper gone (killed), the client's script
#   stops the group itself, still with one TERM (the `cancelled` marker decides who sends it) and a KILL after
#   the grace. AWL_SCHEDULER=slurm (this wrapper is a Slurm batch script): the client writes `cancel`, then runs
#   scancel. Slurm sends its TERM only to the batch shell, this wrapper (and KILL to every process of the job
#   KillWait seconds later, or at once when the batch shell ends). The wrapper traps that TERM and lives on, so
#   the monitor's one TERM to the group, within AWL_TICK, leaves the command its cleanup (up to the grace or
#   KillWait, whichever is shorter). Slurm's TERM itself never reaches the command; one that lands before the
#   command starts means it never starts.
#
# Log cap, per stream, when AWL_LOG_CAP=CAP > 0: HEAD=CAP/8, TAIL=CAP-HEAD. When the live file exceeds TAIL/2,
#   the monitor saves the first HEAD bytes once (STREAM.head), copies the live file and truncates it (`: >`, safe
#   because the writer appends), keeps the last TAIL/2 bytes of the copy as STREAM.prev and adds what it let go to
#   STREAM.dropped. After the command exits, prev+live are cut to their last TAIL bytes. Disk per stream stays
#   within about CAP plus the output of one check gap (AWL_TICK while output grows, up to AWL_CHECK_MAX after a
#   quiet spell; see awl_monitor). A reader shows head + [dropped-HEAD bytes omitted] + prev + live;
#   the tail is the end of prev + live; bytes written = dropped + size(prev) + size(live).
#   No byte is lost between the copy and the truncation: the bulk is copied while the command runs, then the
#   command's process group is stopped (SIGSTOP, every thread seen stopped in /proc), the rest copied, the live
#   file truncated and the group resumed (SIGCONT; a watchdog in its own session resumes it after 5 s should the
#   wrapper die meanwhile). A group that does not stop within 2 s is resumed and the rotation postponed. Not
#   covered: writers outside the command's process group (a descendant that left it), and jobs without a group of
#   their own (no setsid) or without /proc: for those, bytes written between the copy reaching end-of-file and the
#   truncation are lost and not counted.

awl_umask=$(umask)
umask 077
IFS=' 	
'

awl_log() { printf 'awaitless wrapper: %s\n' "$*" >&2; }

# awl_put FILE LINE... : write lines to FILE atomically: FILE.tmp made fresh with noclobber (O_EXCL, so no symlink
# is followed, dangling or not), then renamed over FILE unless FILE is a symlink or a directory.
awl_put() {
  awl_f=$1
  shift
  # Tested first: a heartbeat costs no extra process when nothing is left over.
  if [ -e "$awl_f.tmp" ] || [ -h "$awl_f.tmp" ]; then rm -f "$awl_f.tmp"; fi
  set -C
  printf '%s\n' "$@" >"$awl_f.tmp"
  awl_rc=$?
  set +C
  [ "$awl_rc" = 0 ] || return 1
  if [ -h "$awl_f" ] || [ -d "$awl_f" ]; then
    rm -f "$awl_f.tmp"
    awl_log "$awl_f is a symlink or a directory; not writing through it"
    return 1
  fi
  mv -f "$awl_f.tmp" "$awl_f"
}

awl_now() { awl_t=$(date +%s); }

# awl_stat: sizes of the watched files, one `ls` for all (missing files count 0). Its listing goes through the file
# monitor.ls rather than a command substitution (see awl_monitor on bash's traps); with no room for that file (a
# full disk), through a command substitution after all.
awl_stat() {
  sz_out=0 sz_err=0 sz_prog=0 sz_outp=0 sz_errp=0 awl_seen=0
  { LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln stdout stderr progress stdout.prev stderr.prev >monitor.ls; } 2>/dev/null
  { awl_sizes <monitor.ls; } 2>/dev/null
  [ "$awl_seen" = 0 ] || return 0
  awl_ls=$(LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln stdout stderr progress stdout.prev stderr.prev 2>/dev/null)
  awl_sizes <<EOF
$awl_ls
EOF
}

# awl_sizes: reads an `ls -ln` listing of the watched files on stdin into sz_*.
awl_sizes() {
  while read -r awl_x awl_x awl_x awl_x awl_sz awl_rest; do
    case $awl_rest in
    *' stdout') sz_out=$awl_sz awl_seen=1 ;;
    *' stderr') sz_err=$awl_sz ;;
    *' progress') sz_prog=$awl_sz ;;
    *' stdout.prev') sz_outp=$awl_sz ;;
    *' stderr.prev') sz_errp=$awl_sz ;;
    esac
  done
}

# awl_size FILE: sets awl_sz to its size in bytes.
awl_size() {
  # shellcheck disable=SC2046 # the listing's fields, split
  set -- $(LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln "$1" 2>/dev/null)
  awl_sz=${5:-0}
}

# awl_rotate STREAM PREV_BYTES DROPPED KEEP: move the live file into STREAM.prev keeping the last KEEP bytes of
# prev+live; sets awl_prev (new prev size) and awl_drop (new dropped total). On a full disk it drops nothing it
# has not counted: without room for the head or the snapshot it returns 1 and leaves the live file alone; without
# room for the new prev it keeps the whole snapshot as prev and counts the old prev as dropped.
awl_rotate() {
  if [ -h "$1" ]; then
    awl_log "log cap: $1 is a symlink; not rotating it"
    return 1
  fi
  rm -f "$1.head.tmp" "$1.snap" "$1.prev.tmp"
  if [ ! -e "$1.head" ]; then
    # Nothing was truncated before the first rotation: the live file still starts at the stream's first byte.
    if ! { head -c "$awl_headcap" "$1" >"$1.head.tmp" && mv -f "$1.head.tmp" "$1.head"; } 2>/dev/null; then
      rm -f "$1.head.tmp"
      : >no_space
      awl_log "log cap: no room to save the head of $1 (disk full?); rotation postponed"
      return 1
    fi
  fi
  # The bulk is copied while the command runs; only what it wrote meanwhile is copied with its group frozen, and
  # the live file is truncated before the group resumes, so no byte falls between the copy and the truncation.
  if ! { cat "$1" >"$1.snap"; } 2>/dev/null; then
    rm -f "$1.snap"
    : >no_space
    awl_log "log cap: no room to rotate $1 (disk full?); rotation postponed"
    return 1
  fi
  awl_freeze
  case $? in
  1)
    rm -f "$1.snap"
    return 1
    ;;
  0)
    awl_size "$1.snap"
    if ! { tail -c +$((awl_sz + 1)) "$1" >>"$1.snap"; } 2>/dev/null; then
      awl_thaw
      rm -f "$1.snap"
      : >no_space
      awl_log "log cap: no room to rotate $1 (disk full?); rotation postponed"
      return 1
    fi
    : >"$1"
    awl_thaw
    ;;
  *) : >"$1" ;;
  esac
  awl_size "$1.snap"
  awl_total=$(($2 + awl_sz))
  awl_kept=$awl_total
  [ "$awl_kept" -le "$4" ] || awl_kept=$4
  if [ "$awl_sz" -ge "$4" ]; then
    tail -c "$4" "$1.snap" >"$1.prev.tmp"
  elif [ "$2" -eq 0 ]; then
    mv -f "$1.snap" "$1.prev.tmp"
  else
    cat "$1.prev" "$1.snap" | tail -c "$4" >"$1.prev.tmp"
  fi 2>/dev/null || {
    rm -f "$1.prev.tmp"
    : >no_space
    mv -f "$1.snap" "$1.prev.tmp"
    awl_kept=$awl_sz
  }
  mv -f "$1.prev.tmp" "$1.prev"
  rm -f "$1.snap"
  awl_prev=$awl_kept
  awl_drop=$(($3 + awl_total - awl_prev))
  # Written after the old prev and the snapshot are gone, so the space they held takes it.
  awl_put "$1.dropped" "$awl_drop" 2>/dev/null || awl_log "log cap: could not record $1.dropped=$awl_drop"
}

# awl_freeze: stop the command's process group (SIGSTOP) for the last copy and the truncation of a rotation, so that
# none of its processes appends meanwhile; awl_thaw resumes it. Returns 0 once every thread of the group is stopped,
# 1 when one did not stop within 2 s (resumed; the rotation is postponed), 2 when nothing needs or allows freezing:
# the group is gone, or it has none of its own (no setsid), or no /proc to see it stop; the rotation then truncates
# right after the copy, as before (bytes written in between are lost and not counted). A watchdog in its own
# session resumes the group after 5 s should this process die while it is stopped.
awl_freeze() {
  if [ -z "$pgid" ] || [ -z "$awl_setsid" ] || [ ! -r /proc/self/stat ]; then return 2; fi
  # shellcheck disable=SC2016 # $1 is the watchdog's own argument
  "$awl_setsid" sh -c 'sleep 5; kill -CONT -"$1"' awl-thaw "$pgid" </dev/null >/dev/null 2>&1 &
  awl_wd=$!
  if ! awl_signal_group STOP; then
    kill -TERM -"$awl_wd" 2>/dev/null || kill "$awl_wd" 2>/dev/null
    return 2
  fi
  awl_now
  awl_fz_t0=$awl_t
  # The group's threads, found in one pass over /proc: a group being stopped gains no process (a fork that meets
  # the pending STOP is restarted by the kernel), so only these need looking at again.
  awl_fz_left=''
  for awl_fz_f in /proc/[0-9]*/stat; do
    { read -r awl_l <"$awl_fz_f"; } 2>/dev/null || continue
    awl_stat_line "$awl_l"
    [ "$awl_pg" = "$pgid" ] || continue
    for awl_fz_t in "${awl_fz_f%/stat}"/task/[0-9]*/stat; do awl_fz_left="$awl_fz_left $awl_fz_t"; done
  done
  awl_fz=0
  while [ "$awl_fz" -lt 100 ]; do
    awl_fz_run=''
    # shellcheck disable=SC2086 # /proc paths: split on the spaces between them, no glob characters
    for awl_fz_t in $awl_fz_left; do
      # a thread gone has exited; one inside write() finishes it before it stops
      { read -r awl_l <"$awl_fz_t"; } 2>/dev/null || continue
      awl_stat_line "$awl_l"
      case $awl_st in T | t | Z | X) ;; *) awl_fz_run="$awl_fz_run $awl_fz_t" ;; esac
    done
    [ -n "$awl_fz_run" ] || return 0
    awl_fz_left=$awl_fz_run
    # bounded by the clock, not only by rounds: on a loaded host a round is slow, and the watchdog resumes at 5 s
    awl_now
    [ $((awl_t - awl_fz_t0)) -lt 2 ] || break
    awl_fz=$((awl_fz + 1))
    sleep 0.02 2>/dev/null || { sleep 1 && awl_fz=$((awl_fz + 49)); }
  done
  awl_thaw
  awl_log "log cap: process group $pgid did not stop within 2 s; rotation postponed"
  return 1
}

awl_thaw() {
  awl_signal_group CONT
  # the watchdog leads its own group: its sleep goes with it
  kill -TERM -"$awl_wd" 2>/dev/null || kill "$awl_wd" 2>/dev/null
}

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

# The shared readers: awl_stat_line, awl_proc_stat, awl_read_boot_id, awl_pid_alive, awl_group_alive, awl_q_read,
# awl_q_entry_alive (src/wrapper/prelude.sh, spliced in here when the wrapper is embedded).
# awaitless:include prelude.sh

# Which processes are the job's, how they are listed and stopped, what they cost: awl_track_setup, awl_track_join,
# awl_job_scan, awl_job_stop, awl_usage... (src/wrapper/tracking.sh, spliced in here). See "The whole job" below.
# awaitless:include tracking.sh

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

# awl_clock: sets awl_cs to centiseconds on a monotonic clock, without a fork where /proc/uptime exists (else
# `date +%s`, whole seconds). awl_epoch: sets awl_t to epoch seconds derived from it (the wrapper's start time plus
# the monotonic time since), so the monitor's records never need `date`.
awl_clock() {
  if [ "$awl_up_ok" = 1 ] && { read -r awl_u awl_x </proc/uptime; } 2>/dev/null; then
    awl_cs=$((${awl_u%.*} * 100 + 1${awl_u#*.} - 100))
  else
    awl_now
    awl_cs=$((awl_t * 100))
  fi
}

awl_epoch() { awl_t=$((awl_started_at + (awl_cs - awl_started_cs) / 100)); }

# awl_nap CENTISECONDS: one `sleep` child the monitor waits for; a trapped signal (USR1 from the main wrapper, USR2
# from a client) ends the wait at once: the trap also kills that child, so a signal that lands just before `wait`
# is not slept through. Once the command has exited the monitor only naps while a kill is in progress (the group
# still alive): a short nap then, not none, or it would spin for the whole grace period.
awl_nap() {
  if [ "$awl_done" = 1 ] || [ -f monitor.stop ]; then
    sleep "$awl_short" 2>/dev/null
    return
  fi
  if [ "$awl_wake" = 1 ]; then
    awl_wake=0
    return
  fi
  if [ "$awl_frac" = 1 ]; then
    awl_f=$(($1 % 100))
    [ "$awl_f" -ge 10 ] || awl_f=0$awl_f
    awl_s=$(($1 / 100)).$awl_f
  else
    awl_s=$((($1 + 99) / 100))
  fi
  sleep "$awl_s" &
  awl_nap_pid=$!
  if [ "$awl_done" = 1 ] || [ "$awl_wake" = 1 ] || [ -f monitor.stop ] || ! wait "$awl_nap_pid"; then
    kill "$awl_nap_pid" 2>/dev/null
    wait "$awl_nap_pid" 2>/dev/null
  fi
  awl_nap_pid=''
  awl_wake=0
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
  awl_done=0 awl_wake=0 awl_nap_pid='' awl_frac=0 awl_short=1
  if sleep 0.01 2>/dev/null; then awl_frac=1 awl_short=0.1; fi
  trap 'awl_done=1; [ -z "$awl_nap_pid" ] || kill "$awl_nap_pid" 2>/dev/null' USR1
  # A client's cancel: look at the cancel file now instead of at the end of the nap.
  trap 'awl_wake=1; [ -z "$awl_nap_pid" ] || kill "$awl_nap_pid" 2>/dev/null' USR2
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
        # the copy and the truncate (see the log cap above), and a start is when a burst is most likely under way.
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

# The exit record's reservation (see exit.tmp above). The record is ASCII, so ${#var} counts its bytes.
awl_reserve_bytes=512
awl_reserve_exit() {
  awl_size exit.tmp
  [ "$awl_sz" -eq "$awl_reserve_bytes" ] && return 0
  { printf "%$((awl_reserve_bytes - 1))s\n" '' >exit.tmp; } 2>/dev/null && return 0
  awl_log "no space to reserve the exit record in $PWD (disk full or quota exceeded)"
  return 1
}

# awl_write_exit TEXT: the record (key=value lines) over the reservation, padded to its size, then renamed to exit.
# Without a reservation (it could not be made) `1<>` creates the file: the record then needs a new block.
awl_write_exit() {
  [ ! -h exit.tmp ] || rm -f exit.tmp
  awl_pad=$((awl_reserve_bytes - ${#1} - 2))
  [ "$awl_pad" -ge 1 ] || awl_pad=1
  if { printf "%s\n%${awl_pad}s\n" "$1" '' 1<>exit.tmp; } 2>/dev/null && mv -f exit.tmp exit; then
    return 0
  fi
  awl_log "could not write the exit record in $PWD (disk full?):
$1"
  return 1
}

# awl_finish CODE REASON: final log trim, then the exit record (last file written), then exit.
awl_finish() {
  awl_sig=''
  if [ -n "$1" ] && [ "$1" -gt 128 ] && [ "$1" -le 192 ]; then
    awl_n=$(($1 - 128))
    if [ "$awl_n" -le 31 ]; then
      awl_sig=$(kill -l "$awl_n" 2>/dev/null)
      awl_sig=${awl_sig#SIG}
    else
      awl_sig=$awl_n
    fi
  fi
  o_drop=0 e_drop=0
  if [ "$awl_cap" -gt 0 ]; then
    { read -r o_drop <stdout.dropped; } 2>/dev/null
    { read -r e_drop <stderr.dropped; } 2>/dev/null
  fi
  awl_stat
  if [ "$awl_cap" -gt 0 ]; then
    if [ $((sz_out + sz_outp)) -gt "$awl_tailcap" ]; then
      awl_rotate stdout "$sz_outp" "${o_drop:-0}" "$awl_tailcap" &&
        o_drop=$awl_drop sz_outp=$awl_prev sz_out=0
    fi
    if [ $((sz_err + sz_errp)) -gt "$awl_tailcap" ]; then
      awl_rotate stderr "$sz_errp" "${e_drop:-0}" "$awl_tailcap" &&
        e_drop=$awl_drop sz_errp=$awl_prev sz_err=0
    fi
  fi
  # A full disk now (a one-byte write needs a block) or earlier (the marker): the record says so.
  { printf x >no_space.probe; } 2>/dev/null || : >no_space
  rm -f no_space.probe
  awl_nospace=''
  [ ! -e no_space ] || awl_nospace='
no_space=1'
  awl_now
  # the command's end (the whole job's processes were stopped after it), or now when it never ran
  [ -n "${awl_cmd_end-}" ] || awl_cmd_end=$awl_t
  awl_write_exit "exit_code=$1
signal=$awl_sig
reason=$2
finished_at=$awl_cmd_end
descendants_alive=${awl_desc:-0}
stdout_dropped=${o_drop:-0}
stderr_dropped=${e_drop:-0}
stdout_bytes=$((${o_drop:-0} + sz_outp + sz_out))
stderr_bytes=$((${e_drop:-0} + sz_errp + sz_err))$awl_nospace${awl_a_failed:+
dependency=$awl_a_failed}
wrapper_pid=${awl_wrapper_pid-}
proc_start=${awl_proc_start-}${awl_endf:-
leftovers=0
leftovers_action=stopped}"
  # the job's cgroups go once its record is out (removing one takes the kernel a while); one that kept processes stays
  [ "${awl_left_action-}" = kept ] || awl_track_drop
  # The queue slot (or place in line) is freed after the exit record, so a job's files never show more
  # commands running than its queue admits; a wrapper that dies in between has its slot reclaimed. Processes the
  # job kept running hold it until they end (awl_q_keep).
  if [ -n "$awl_q_slot" ] && [ "${awl_left_action-}" = kept ]; then
    awl_q_keep
  elif [ -n "$awl_q_slot" ]; then
    rm -f "$awl_q_slot"
  fi
  [ -z "$awl_q_entry" ] || rm -f "$awl_q_entry"
  [ -z "$awl_q_entry$awl_q_slot" ] || awl_q_wake
  awl_after_wake "$1" "$2"
  # Under Slurm the batch script's status is what afterok/afternotok dependencies see: 0 only for a command that
  # succeeded (or a job cancelled, which Slurm records as CANCELLED itself).
  [ "$AWL_SCHEDULER" = slurm ] || exit 0
  case $2/$1 in exited/0 | cancelled/*) exit 0 ;; esac
  exit 1
}

awl_launch_failed() {
  awl_log "launch failed: $*"
  awl_finish 126 launch_failed
}

# awl_number NAME DEFAULT: validate a non-negative integer setting from spec.sh.
awl_number() {
  eval "awl_v=\${$1:-$2}"
  case $awl_v in '' | *[!0-9]*) awl_launch_failed "$1='$awl_v' in spec.sh is not a non-negative integer" ;; esac
  eval "$1=\$awl_v"
}

# --- Queue admission -------------------------------------------------------------------------------------------
# When spec.sh names a queue (AWL_QUEUE) or resources (AWL_RESOURCES), the wrapper waits here for its turn before
# anything starts. Everything lives under AWL_QUEUE_DIR (ROOT), shared by every wrapper of this user on this machine:
#   lock.mode         flock | mkdir: the lock mechanism, fixed by the first wrapper to use ROOT (hard link: first wins).
#   lock / lock.d/    the admission lock: flock(1) on `lock`, or the directory lock.d holding one owner file named
#                     WRAPPER_PID.PROC_START.BOOT_ID (a dead owner's lock is removed by the next wrapper that waits).
#   ticket            the last ticket handed out (decimal, taken under the lock; FIFO order across all clients).
#   waiting/T.JOB_ID  a waiting job with ticket T. running/JOB_ID: an admitted job (its waiting entry, renamed).
#                     key=value: ticket queue concurrency resources wrapper_pid proc_start boot_id [pid pgid]
#   tmp/              entries are written here first, then renamed in.
# Rule, checked under the lock: a job is admitted when no earlier waiting job shares its queue or a resource, no
# running job holds one of its resources, and fewer than AWL_QUEUE_CONCURRENCY jobs of its queue run. An entry
# whose wrapper is gone (pid, process start time, boot ID) and whose command group is gone is removed by whoever
# sees it. The job directory gets `queued` (key=value, rewritten on change): queue position ahead running
# concurrency held resources ticket since wrapper_pid proc_start [admitted_at]. A client cancels a waiting job by
# writing `cancel`, removing waiting/T.JOB_ID, then waking the wrapper (USR2); a wrapper whose entry vanished, or
# that sees `cancel` before admission, never starts. Waiters sleep until woken (USR1 from the wrapper that takes or
# frees a slot or leaves the line: awl_q_wake) or until a backoff ends, and a scan reads a few entries, not the
# whole line (awl_q_scan), so a long line costs one sleeping process per waiter.

# awl_q_shares: does the entry read last need one of this job's resources?
awl_q_shares() {
  [ -n "$AWL_RESOURCES" ] && [ -n "$e_res" ] || return 1
  for awl_r in $AWL_RESOURCES; do
    case " $e_res " in *" $awl_r "*) return 0 ;; esac
  done
  return 1
}

# awl_q_lock / awl_q_unlock: the admission lock (see lock.mode above).
awl_q_lock() {
  if [ "$awl_q_mode" = flock ]; then
    exec 9>>"$awl_q_root/lock" && flock -x 9 && return 0
    awl_launch_failed "cannot lock '$awl_q_root/lock' with flock"
  fi
  awl_q_empty=0
  until mkdir "$awl_q_root/lock.d" 2>/dev/null && { : >"$awl_q_root/lock.d/$awl_q_me"; } 2>/dev/null; do
    awl_q_break
    sleep 0.05 2>/dev/null || sleep 1
  done
}

awl_q_unlock() {
  if [ "$awl_q_mode" = flock ]; then
    exec 9>&-
  else
    rm -f "$awl_q_root/lock.d/$awl_q_me"
    rmdir "$awl_q_root/lock.d" 2>/dev/null
  fi
}

# awl_q_break: remove lock.d when its owner is dead. Only the wrapper whose `rm` of that owner file succeeds
# removes the directory (rmdir fails on a directory a new owner has marked). A directory still empty after ~40
# looks (its creator died between mkdir and marking it) is removed too.
awl_q_break() {
  set -- "$awl_q_root"/lock.d/*
  if [ -e "$1" ]; then
    awl_q_empty=0
    awl_o=${1##*/}
    e_wpid=${awl_o%%.*} awl_o=${awl_o#*.}
    e_wstart=${awl_o%%.*} e_boot=${awl_o#*.} e_pid='' e_pgid='' e_job='' e_kept='' e_cg=''
    awl_q_entry_alive && return 0
    if rm "$1" 2>/dev/null && rmdir "$awl_q_root/lock.d" 2>/dev/null; then
      awl_log "queue: removed the admission lock of wrapper $e_wpid, which is gone"
    fi
  elif [ -d "$awl_q_root/lock.d" ]; then
    awl_q_empty=$((awl_q_empty + 1))
    if [ "$awl_q_empty" -ge 40 ]; then
      rmdir "$awl_q_root/lock.d" 2>/dev/null
      awl_q_empty=0
    fi
  fi
}

# awl_q_scan (under the lock): drop dead slots; set awl_q_run (running jobs of the queue), awl_q_held (1 if a
# running job holds a resource we need) and awl_q_ahead (earlier waiters sharing the queue or a resource). Only
# earlier waiting entries are read, and only until awl_q_far (concurrency + 1) live sharing ones are found: then
# this job is far back, and awl_q_rest counts the earlier entries not read (of any queue), so awl_q_ahead is an
# upper bound. Near the front (awl_q_rest=0) every earlier entry was read and a dead one dropped (awl_q_dropped=1).
awl_q_scan() {
  awl_q_ahead=0 awl_q_run=0 awl_q_held=0 awl_q_reads=0 awl_q_rest=0 awl_q_dropped=0 awl_q_seen=0
  awl_q_far=$((AWL_QUEUE_CONCURRENCY + 1))
  for awl_e in "$awl_q_root"/running/*; do
    [ -e "$awl_e" ] || continue
    awl_q_reads=$((awl_q_reads + 1))
    if ! awl_q_read "$awl_e"; then
      # Gone since the glob: its own wrapper freed it (the normal end). Still there: no wrapper_pid, not a slot.
      [ -e "$awl_e" ] || continue
      awl_log "queue: removing ${awl_e##*/} from running/: it names no wrapper"
      rm -f "$awl_e"
      awl_q_dropped=1
      continue
    fi
    if ! awl_q_entry_alive; then
      awl_log "queue: freeing the slot of ${awl_e##*/}: its wrapper and command are gone"
      rm -f "$awl_e"
      awl_q_dropped=1
      continue
    fi
    [ -n "$AWL_QUEUE" ] && [ "$e_queue" = "$AWL_QUEUE" ] && awl_q_run=$((awl_q_run + 1))
    awl_q_shares && awl_q_held=1
  done
  for awl_e in "$awl_q_root"/waiting/*; do
    awl_n=${awl_e##*/}
    awl_n=${awl_n%%.*}
    case $awl_n in '' | 0* | *[!0-9]*) continue ;; esac
    [ "$awl_n" -lt "$awl_q_ticket" ] || continue
    if [ "$awl_q_ahead" -ge "$awl_q_far" ]; then
      # Far back: the earlier entries not looked at are counted by globs, not one by one.
      awl_q_below "$awl_q_ticket"
      awl_q_rest=$((awl_q_nb - awl_q_seen))
      break
    fi
    awl_q_reads=$((awl_q_reads + 1))
    if ! awl_q_read "$awl_e" || ! awl_q_entry_alive; then
      [ -e "$awl_e" ] || continue
      awl_log "queue: dropping ${awl_e##*/}: its wrapper is gone"
      rm -f "$awl_e"
      awl_q_dropped=1
      continue
    fi
    awl_q_seen=$((awl_q_seen + 1))
    if { [ -n "$AWL_QUEUE" ] && [ "$e_queue" = "$AWL_QUEUE" ]; } || awl_q_shares; then
      awl_q_ahead=$((awl_q_ahead + 1))
    fi
  done
  awl_q_ahead=$((awl_q_ahead + awl_q_rest))
  awl_q_count
}

# awl_q_below T: awl_q_nb = the number of waiting/ entries whose ticket (by name) is below T: all shorter tickets,
# then per digit of T those sharing its digits before and a lower one there. A few globs; no shell loop per entry.
awl_q_below() {
  awl_q_nb=0 awl_b_pat='[1-9]'
  while [ "${#awl_b_pat}" -lt $((${#1} * 5)) ]; do
    awl_q_globs "$awl_b_pat"
    awl_b_pat="${awl_b_pat}[0-9]"
  done
  awl_b_pre='' awl_b_rest=$1 awl_b_lo=1
  while [ -n "$awl_b_rest" ]; do
    awl_b_d=${awl_b_rest%"${awl_b_rest#?}"}
    awl_b_rest=${awl_b_rest#?}
    if [ "$awl_b_d" -gt "$awl_b_lo" ]; then
      awl_b_pat="${awl_b_pre}[$awl_b_lo-$((awl_b_d - 1))]" awl_b_t=$awl_b_rest
      while [ -n "$awl_b_t" ]; do
        awl_b_pat="${awl_b_pat}[0-9]" awl_b_t=${awl_b_t#?}
      done
      awl_q_globs "$awl_b_pat"
    fi
    awl_b_pre=$awl_b_pre$awl_b_d awl_b_lo=0
  done
}

# awl_q_globs PATTERN: adds to awl_q_nb the number of waiting/PATTERN.* entries.
awl_q_globs() {
  # shellcheck disable=SC2086,SC2231 # PATTERN is a glob of digit classes, expanded on purpose
  set -- "$awl_q_root"/waiting/$1.*
  [ -e "$1" ] || [ -h "$1" ] || shift
  awl_q_nb=$((awl_q_nb + $#))
}

# awl_q_count: under AWAITLESS_TEST_QUEUE_SCANS=FILE (tests only), one line per scan: WRAPPER_PID ENTRIES_READ.
awl_q_count() {
  [ -z "${AWAITLESS_TEST_QUEUE_SCANS-}" ] ||
    { printf '%s %s\n' "$awl_wrapper_pid" "$awl_q_reads" >>"$AWAITLESS_TEST_QUEUE_SCANS"; } 2>/dev/null
}

# awl_q_enqueue (under the lock): take the next ticket (past every ticket in waiting/, by name) and add this job's
# waiting entry.
awl_q_enqueue() {
  awl_q_ticket='' awl_q_max=0
  for awl_e in "$awl_q_root"/waiting/*; do
    awl_n=${awl_e##*/}
    awl_n=${awl_n%%.*}
    case $awl_n in '' | 0* | *[!0-9]*) continue ;; esac
    [ "$awl_n" -le "$awl_q_max" ] || awl_q_max=$awl_n
  done
  awl_qt=0
  { read -r awl_qt <"$awl_q_root/ticket"; } 2>/dev/null
  case $awl_qt in '' | 0* | *[!0-9]*) awl_qt=0 ;; esac
  [ "$awl_qt" -ge "$awl_q_max" ] || awl_qt=$awl_q_max
  awl_q_ticket=$((awl_qt + 1))
  awl_put "$awl_q_root/ticket" "$awl_q_ticket" || awl_launch_failed "cannot write '$awl_q_root/ticket'"
  awl_q_entry=$awl_q_root/waiting/$awl_q_ticket.$AWL_JOB_ID
  # shellcheck disable=SC2015 # a failed printf or mv alike: launch failed
  printf '%s\n' "ticket=$awl_q_ticket" "queue=$AWL_QUEUE" "concurrency=$AWL_QUEUE_CONCURRENCY" \
    "resources=$AWL_RESOURCES" "wrapper_pid=$awl_wrapper_pid" "proc_start=$awl_proc_start" \
    "boot_id=$awl_boot_id" >"$awl_q_root/tmp/$AWL_JOB_ID" &&
    mv -f "$awl_q_root/tmp/$AWL_JOB_ID" "$awl_q_entry" ||
    awl_launch_failed "cannot write the queue entry '$awl_q_entry'"
}

# awl_q_wake: USR1 to the first awl_q_far (concurrency + 1) waiters, by ticket, that share this job's queue or a
# resource: called when this job takes a slot, frees one or leaves the line, so the next in line looks now and the
# one that moved near the front polls again. Tickets of one length, globbed, come in ticket order; lengths go up
# to the last ticket handed out's. Only a process started when its entry says is signalled (a reused pid is not).
awl_q_wake() {
  awl_w_left=$((AWL_QUEUE_CONCURRENCY + 1)) awl_w_top=''
  { read -r awl_w_top <"$awl_q_root/ticket"; } 2>/dev/null
  case $awl_w_top in '' | *[!0-9]*) return 0 ;; esac
  awl_w_pat='[1-9]'
  while [ "${#awl_w_pat}" -le $((${#awl_w_top} * 5)) ]; do
    # shellcheck disable=SC2231 # awl_w_pat is a glob of digit classes, expanded on purpose
    for awl_e in "$awl_q_root"/waiting/$awl_w_pat.*; do
      [ "$awl_e" != "$awl_q_entry" ] || continue
      awl_q_read "$awl_e" || continue
      { [ -n "$AWL_QUEUE" ] && [ "$e_queue" = "$AWL_QUEUE" ]; } || awl_q_shares || continue
      case $e_wpid in '' | *[!0-9]* | 0 | 1 | 0*) continue ;; esac
      [ -n "$e_wstart" ] || [ ! -r /proc/self/stat ] || continue
      # only the entry's own wrapper, waiting with its trap set (USR1 would end any other process)
      awl_pid_alive "$e_wpid" "$e_wstart" && awl_is_wrapper_of "$e_wpid" "$e_job" && awl_catches "$e_wpid" 10 &&
        kill -USR1 "$e_wpid" 2>/dev/null
      awl_w_left=$((awl_w_left - 1))
      [ "$awl_w_left" -gt 0 ] || return 0
    done
    awl_w_pat="${awl_w_pat}[0-9]"
  done
  return 0
}

# awl_q_report [admitted_at=T]: rewrite the job's `queued` file when what it says changed.
awl_q_report() {
  awl_q_now="position=$((awl_q_ahead + 1)) ahead=$awl_q_ahead running=$awl_q_run held=$awl_q_held $*"
  [ "$awl_q_now" != "$awl_q_said" ] || return 0
  awl_q_said=$awl_q_now
  # shellcheck disable=SC2086 # awl_q_now is key=value words
  awl_put queued "queue=$AWL_QUEUE" "concurrency=$AWL_QUEUE_CONCURRENCY" "resources=$AWL_RESOURCES" \
    "ticket=$awl_q_ticket" "since=$awl_q_since" "wrapper_pid=$awl_wrapper_pid" "proc_start=$awl_proc_start" $awl_q_now
}

# awl_q_never_ran: a cancel arrived before admission: leave the line; the command never starts.
awl_q_never_ran() {
  rm -f "$awl_q_entry"
  awl_log "cancel requested while queued; the command never ran"
  awl_finish '' cancelled
}

# awl_q_setup: resolve ROOT, create its directories and settle the lock mechanism.
awl_q_setup() {
  case $AWL_QUEUE_DIR in
  '') awl_launch_failed "spec.sh names a queue or resources but no AWL_QUEUE_DIR" ;;
  /*) awl_q_root=$AWL_QUEUE_DIR ;;
  *) awl_q_root=$awl_start_dir/$AWL_QUEUE_DIR ;;
  esac
  mkdir -p "$awl_q_root/waiting" "$awl_q_root/running" "$awl_q_root/tmp" ||
    awl_launch_failed "cannot create the queue directory '$awl_q_root'"
  if [ ! -f "$awl_q_root/lock.mode" ]; then
    awl_m=${AWL_QUEUE_LOCK:-auto}
    if [ "$awl_m" = auto ]; then
      awl_m='mkdir'
      command -v flock >/dev/null 2>&1 && awl_m=flock
    fi
    printf '%s\n' "$awl_m" >"$awl_q_root/tmp/lock.mode.$$" &&
      ln "$awl_q_root/tmp/lock.mode.$$" "$awl_q_root/lock.mode" 2>/dev/null
    rm -f "$awl_q_root/tmp/lock.mode.$$"
  fi
  awl_q_mode=''
  { read -r awl_q_mode <"$awl_q_root/lock.mode"; } 2>/dev/null
  case $awl_q_mode in
  flock)
    command -v flock >/dev/null 2>&1 ||
      awl_launch_failed "'$awl_q_root' is locked with flock, which is not on this wrapper's PATH; install flock (util-linux) or give every job the same PATH"
    ;;
  mkdir) ;;
  *) awl_launch_failed "'$awl_q_root/lock.mode' is missing or unreadable; remove '$awl_q_root' when no job waits" ;;
  esac
  awl_q_me=$awl_wrapper_pid.$awl_proc_start.$awl_boot_id
}

# awl_q_admit: take a ticket, then wait for the admission rule; on return this job holds running/JOB_ID. Between
# scans it sleeps until woken (USR1 from a wrapper that took or freed a slot or left the line, USR2 from a client's
# cancel) or until a backoff ends: AWL_TICK doubling to 8 s near the front, to 60 s far back. The backoff alone
# catches what no one wakes for: a killed wrapper's place in line or slot.
awl_q_admit() {
  awl_q_setup
  awl_now
  awl_q_since=$awl_t awl_q_said='' awl_q_woke=0 awl_nap_pid='' awl_q_nap=$AWL_TICK
  # Set before the entry (the wake address) exists: an untrapped USR1 would end this wrapper.
  trap 'awl_q_woke=1; [ -z "$awl_nap_pid" ] || kill "$awl_nap_pid" 2>/dev/null' USR1 USR2
  awl_q_lock
  awl_q_enqueue
  awl_q_unlock
  while :; do
    awl_q_woke=0
    [ -f cancel ] && awl_q_never_ran
    awl_q_lock
    if [ ! -e "$awl_q_entry" ]; then
      awl_q_unlock
      [ -f cancel ] && awl_q_never_ran
      awl_log "queue: entry ${awl_q_entry##*/} was removed by someone else; taking a new ticket"
      awl_q_lock
      awl_q_enqueue
      awl_q_unlock
      continue
    fi
    awl_q_scan
    if [ "$awl_q_ahead" -eq 0 ] && [ "$awl_q_held" -eq 0 ] &&
      { [ -z "$AWL_QUEUE" ] || [ "$awl_q_run" -lt "$AWL_QUEUE_CONCURRENCY" ]; }; then
      if [ -f cancel ]; then
        awl_q_unlock
        awl_q_never_ran
      fi
      if mv "$awl_q_entry" "$awl_q_root/running/$AWL_JOB_ID" 2>/dev/null; then
        awl_q_slot=$awl_q_root/running/$AWL_JOB_ID
        awl_q_unlock
        # A wake that comes late must not end the wrapper; the command gets default handlers back at exec.
        trap : USR1 USR2
        awl_now
        awl_q_report "admitted_at=$awl_t"
        awl_q_wake
        return 0
      fi
    fi
    awl_q_unlock
    awl_q_report
    [ "$awl_q_dropped" = 0 ] || awl_q_wake
    awl_q_cap=60
    [ "$awl_q_rest" -gt 0 ] || awl_q_cap=8
    [ "$awl_q_cap" -ge "$AWL_TICK" ] || awl_q_cap=$AWL_TICK
    [ "$awl_q_nap" -le "$awl_q_cap" ] || awl_q_nap=$awl_q_cap
    if [ "$awl_q_woke" = 0 ]; then
      sleep "$awl_q_nap" &
      awl_nap_pid=$!
      if [ "$awl_q_woke" = 1 ] || ! wait "$awl_nap_pid"; then
        kill "$awl_nap_pid" 2>/dev/null
        wait "$awl_nap_pid" 2>/dev/null
      fi
      awl_nap_pid=''
    fi
    if [ "$awl_q_woke" = 1 ]; then
      awl_q_nap=$AWL_TICK
    else
      awl_q_nap=$((awl_q_nap * 2))
    fi
  done
}

# awl_q_mark_running PID PGID (the command's own process, before `started`): add its pid and group to the slot,
# so that a slot whose wrapper was killed stays held while the command still runs.
awl_q_mark_running() {
  { cat "$awl_q_slot" && printf '%s\n' "pid=$1" "pgid=$2"; } >"$awl_q_root/tmp/$AWL_JOB_ID" 2>/dev/null &&
    mv -f "$awl_q_root/tmp/$AWL_JOB_ID" "$awl_q_slot"
}

# --- Dependencies ----------------------------------------------------------------------------------------------
# When spec.sh names parents (AWL_AFTER_N=N, then for i in 1..N: AWL_AFTER_i_ID, AWL_AFTER_i_ON = ok | any | failed,
# AWL_AFTER_i_DIR = the parent's job directory on this machine), the wrapper holds here, before queue admission,
# until every condition holds; then it goes on as any job. A parent has ended when its exit record exists (it
# succeeded when that says reason=exited exit_code=0), or when the wrapper its `started` or `queued` record names
# is gone without one (killed, or a reboot since): that counts as not succeeded. `ok` needs success, `failed` any
# other end, `any` an end. A condition that can no longer hold ends the job at once, before anything runs: exit
# record reason=dependency_failed, dependency=ID:ON (the first such parent), exit_code empty. Its own dependents
# are woken by that record like any other, so a failure propagates down a chain.
#   queued                 while holding: after=ID:ON (the first parent still awaited) since wrapper_pid proc_start
#                          boot_id (the record a queue wait rewrites later; readers tell the two by `after`).
#   PARENT_DIR/dependents/CHILD_ID   the held wrapper's wake address (wrapper_pid proc_start), written through
#                          PARENT_DIR/dependents/.CHILD_ID.tmp; removed when the hold ends. A parent's wrapper sends
#                          USR1 to each live one right after writing its own exit record, so a held job costs one
#                          sleeping process: between wakes it only looks again after a backoff (AWL_TICK doubling to
#                          60 s) that catches a parent whose wrapper was killed. A client's cancel wakes it with USR2.
# AWL_AFTER_FAILED=ID:ON: the client found that condition impossible at submit; the job ends at once, as above.
# AWL_AFTER_i_FINAL=1: the parent has retries (core/retries.ts), and PARENT_DIR is its first attempt's directory. An
#   attempt's exit record or dead wrapper says nothing then (a retry may follow); the parent has ended only once
#   PARENT_DIR/final exists (outcome=ok|failed attempt=N), written by the last attempt's wrapper when its end is
#   certainly the last (awl_final_of), else by the client that records the job's end (host/settle.sh). Both wake the
#   dependents registered in PARENT_DIR/dependents.

# awl_a_outcome DIR: sets awl_a_out to ok | failed (the parent ended so) or '' (it has not ended).
# shellcheck disable=SC2317 # called through awl_a_each "$1"
awl_a_outcome() {
  awl_a_out=''
  if [ ! -d "$1" ]; then
    awl_a_out=failed
    return 0
  fi
  if [ "$awl_a_fin" = 1 ]; then
    [ -f "$1/final" ] || return 0
    awl_a_out=failed
    { while IFS='=' read -r awl_k awl_v; do
      [ "$awl_k=$awl_v" != outcome=ok ] || awl_a_out=ok
    done <"$1/final"; } 2>/dev/null
    return 0
  fi
  if [ ! -f "$1/exit" ]; then
    for awl_a_r in started queued; do
      [ -f "$1/$awl_a_r" ] || continue
      awl_a_pid='' awl_a_ps='' awl_a_boot=''
      { while IFS='=' read -r awl_k awl_v; do
        case $awl_k in
        wrapper_pid) awl_a_pid=$awl_v ;;
        proc_start) awl_a_ps=$awl_v ;;
        boot_id) awl_a_boot=$awl_v ;;
        esac
      done <"$1/$awl_a_r"; } 2>/dev/null
      case $awl_a_pid in '' | *[!0-9]* | 0 | 1) continue ;; esac
      if { [ -n "$awl_a_boot" ] && [ -n "$awl_boot_id" ] && [ "$awl_a_boot" != "$awl_boot_id" ]; } ||
        ! awl_pid_alive "$awl_a_pid" "$awl_a_ps" || ! awl_is_wrapper_of "$awl_a_pid" "$awl_a_id"; then
        # The wrapper may have written its record and exited since the first look.
        [ -f "$1/exit" ] || awl_a_out=failed
      fi
      break
    done
    [ -f "$1/exit" ] || return 0
  fi
  awl_a_rc='' awl_a_rs=''
  { while IFS='=' read -r awl_k awl_v; do
    case $awl_k in
    exit_code) awl_a_rc=$awl_v ;;
    reason) awl_a_rs=$awl_v ;;
    esac
  done <"$1/exit"; } 2>/dev/null
  awl_a_out=failed
  [ "$awl_a_rs/$awl_a_rc" != exited/0 ] || awl_a_out=ok
}

# awl_a_each CMD: runs CMD for each parent with awl_a_id, awl_a_on and awl_a_dir set.
awl_a_each() {
  awl_a_i=1
  while [ "$awl_a_i" -le "$AWL_AFTER_N" ]; do
    awl_a_id='' awl_a_on='' awl_a_dir='' awl_a_fin=''
    eval "awl_a_id=\${AWL_AFTER_${awl_a_i}_ID-} awl_a_on=\${AWL_AFTER_${awl_a_i}_ON-} awl_a_dir=\${AWL_AFTER_${awl_a_i}_DIR-} awl_a_fin=\${AWL_AFTER_${awl_a_i}_FINAL-}"
    case $awl_a_dir in '' | /*) ;; *) awl_a_dir=$awl_start_dir/$awl_a_dir ;; esac
    "$1"
    awl_a_i=$((awl_a_i + 1))
  done
}

# shellcheck disable=SC2317 # called through awl_a_each "$1"
awl_a_register() {
  awl_a_d=$awl_a_dir/dependents
  [ -d "$awl_a_dir" ] || return 0
  mkdir -p "$awl_a_d" 2>/dev/null
  if [ -h "$awl_a_d" ] || [ ! -d "$awl_a_d" ]; then
    awl_log "dependencies: cannot use $awl_a_d; looking at $awl_a_id without being woken"
    return 0
  fi
  rm -f "$awl_a_d/.$AWL_JOB_ID.tmp"
  { (set -C && printf '%s\n' "wrapper_pid=$awl_wrapper_pid" "proc_start=$awl_proc_start" >"$awl_a_d/.$AWL_JOB_ID.tmp") &&
    mv -f "$awl_a_d/.$AWL_JOB_ID.tmp" "$awl_a_d/$AWL_JOB_ID"; } 2>/dev/null ||
    awl_log "dependencies: cannot write $awl_a_d/$AWL_JOB_ID; looking at $awl_a_id without being woken"
}

# shellcheck disable=SC2317 # called through awl_a_each "$1"
awl_a_unregister() { [ -z "$awl_a_dir" ] || rm -f "$awl_a_dir/dependents/$AWL_JOB_ID" 2>/dev/null; }

# shellcheck disable=SC2317 # called through awl_a_each "$1"
awl_a_check() {
  awl_a_outcome "$awl_a_dir"
  case $awl_a_on/$awl_a_out in
  */) [ -n "$awl_a_wait" ] || awl_a_wait=$awl_a_id:$awl_a_on ;;
  ok/failed | failed/ok) [ -n "$awl_a_failed" ] || awl_a_failed=$awl_a_id:$awl_a_on ;;
  esac
}

# awl_a_end: leave every parent's wake list; a condition that can no longer hold ends the job (it never runs).
awl_a_end() {
  awl_a_each awl_a_unregister
  trap : USR1 USR2
  [ -n "$awl_a_failed" ] || return 0
  awl_log "dependency $awl_a_failed can no longer hold; the command never ran"
  awl_finish '' dependency_failed
}

# awl_after_hold: wait on this machine until every parent's condition holds (see "Dependencies" above).
awl_after_hold() {
  awl_a_failed=${AWL_AFTER_FAILED-}
  [ -z "$awl_a_failed" ] || awl_a_end
  [ "$AWL_AFTER_N" -gt 0 ] || return 0
  awl_now
  awl_a_since=$awl_t awl_a_said='' awl_a_wake=0 awl_nap_pid='' awl_a_nap=$AWL_TICK
  # Set before the wake addresses exist: an untrapped USR1 would end this wrapper.
  trap 'awl_a_wake=1; [ -z "$awl_nap_pid" ] || kill "$awl_nap_pid" 2>/dev/null' USR1 USR2
  awl_a_each awl_a_register
  while :; do
    if [ -f cancel ]; then
      awl_a_failed=''
      awl_a_each awl_a_unregister
      awl_log "cancel requested while waiting for dependencies; the command never ran"
      awl_finish '' cancelled
    fi
    awl_a_wake=0 awl_a_wait=''
    awl_a_each awl_a_check
    [ -z "$awl_a_failed" ] || awl_a_end
    [ -n "$awl_a_wait" ] || break
    if [ "$awl_a_wait" != "$awl_a_said" ]; then
      awl_a_said=$awl_a_wait
      awl_put queued "after=$awl_a_wait" "since=$awl_a_since" "wrapper_pid=$awl_wrapper_pid" \
        "proc_start=$awl_proc_start" "boot_id=$awl_boot_id" ||
        awl_log "dependencies: could not write the queued record"
    fi
    sleep "$awl_a_nap" &
    awl_nap_pid=$!
    if [ "$awl_a_wake" = 1 ] || ! wait "$awl_nap_pid"; then
      kill "$awl_nap_pid" 2>/dev/null
      wait "$awl_nap_pid" 2>/dev/null
    fi
    awl_nap_pid=''
    if [ "$awl_a_wake" = 1 ]; then
      awl_a_nap=$AWL_TICK
    elif [ "$awl_a_nap" -lt 60 ]; then
      awl_a_nap=$((awl_a_nap * 2))
      [ "$awl_a_nap" -le 60 ] || awl_a_nap=60
    fi
  done
  awl_a_end
}

# awl_final_of CODE REASON: awl_fo = ok | failed when this attempt's end is certainly the job's last, '' when a
# client may retry it: its class (exit: the command failed; infrastructure: the launch failed) is in AWL_RETRY_ON and
# AWL_RETRY_LEFT > 0 (core/retries.ts retryDue decides the same from the same record).
awl_final_of() {
  awl_fo=failed awl_fc=''
  case $2/$1 in
  exited/0)
    awl_fo=ok
    return 0
    ;;
  exited/?*) awl_fc='exit' ;;
  launch_failed/*) awl_fc=infrastructure ;;
  esac
  [ -n "$awl_fc" ] && [ "$AWL_RETRY_LEFT" -gt 0 ] || return 0
  case " $AWL_RETRY_ON " in *" $awl_fc "*) awl_fo='' ;; esac
}

# awl_after_wake CODE REASON (in awl_finish, after the exit record): wakes the held dependents. A job without
# retries wakes those in its own directory; a retried job's dependents wait in its first attempt's directory
# (awl_root) for its `final` record, written here when this end is certainly the last (see "Dependencies").
awl_after_wake() {
  if [ -z "$AWL_RETRY_ON" ]; then
    awl_wake_dependents .
    return 0
  fi
  awl_final_of "$1" "$2"
  [ -n "$awl_fo" ] || return 0
  if awl_put_final "$awl_root" "$awl_fo" "$AWL_ATTEMPT"; then
    awl_wake_dependents "$awl_root"
  else
    awl_log "dependencies: could not write $awl_root/final; a client will"
  fi
}

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

# awl_job_end (main wrapper, right after the command exited, in the job directory): lists what the command left,
# stops the monitor (which finishes a kill in progress), then stops the rest (or keeps it), and measures the job.
awl_job_end() {
  # the monitor first: it starts no kill from now on (one in progress it finishes)
  : >monitor.stop
  kill -USR1 "$awl_mon" 2>/dev/null
  awl_exclude="$awl_wrapper_pid $awl_mon"
  awl_job_scan tracked.ls
  awl_left_n=$awl_procs_n awl_left_action=stopped
  if [ "$awl_left_n" -gt 0 ]; then
    awl_lines=$(awl_procs_list)
    awl_put leftovers "$awl_lines" 2>/dev/null || { rm -f leftovers.tmp; : >no_space; }
    awl_desc=1
  fi
  wait "$awl_mon"
  rm -f monitor.stop
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

# --- main -------------------------------------------------------------------------------------------------
awl_start_dir=$PWD
case ${1-} in
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
# Files here are untrusted: a symlink under a name the wrapper writes would have it write elsewhere.
for awl_f in stdout stderr progress exit.tmp exit started heartbeat no_space monitor.stop leftovers tracked.ls tracked.mon; do
  [ ! -h "$awl_f" ] || { rm -f "$awl_f" && awl_log "removed the symlink $awl_dir/$awl_f; the wrapper writes it"; }
done
AWL_QUEUE='' AWL_RESOURCES='' AWL_QUEUE_DIR='' AWL_QUEUE_LOCK='' AWL_SCHEDULER='' AWL_AFTER_N=0 AWL_AFTER_FAILED=''
AWL_ATTEMPT=1 AWL_RETRY_LEFT=0 AWL_RETRY_ON='' awl_root=$awl_dir
# First the exit record's room, so that output filling the disk later cannot take it; no room: nothing starts.
awl_reserve_exit ||
  awl_launch_failed "no space for the job's records in '$awl_dir'; free space (awaitless gc) or use a larger file system"
: >>stdout
: >>stderr
# shellcheck source=/dev/null # spec.sh is the job's, written by the client
if ! [ -r spec.sh ] || ! (. ./spec.sh) >/dev/null 2>&1; then
  awl_launch_failed "'$awl_dir/spec.sh' is missing or is not valid sh; render it with renderSpec()"
fi
# shellcheck source=/dev/null
. ./spec.sh
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
[ $# -gt 0 ] || awl_launch_failed "spec.sh sets no command (set -- argv...)"

# A Slurm requeue runs this script again in the same directory: the earlier run's records are kept as NAME.earlier
# (readers also ignore records older than this run's start), so none is read as this run's.
if [ "$AWL_SCHEDULER" = slurm ]; then
  for awl_f in started heartbeat exit; do
    [ ! -f "$awl_f" ] || mv -f "$awl_f" "$awl_f.earlier"
  done
fi

awl_wrapper_pid=$$
awl_read_boot_id
awl_proc_start=''
awl_proc_stat "$$" && awl_proc_start=$awl_start

# Under Slurm the wrapper outlives scancel's TERM (see "Cancel"); one that lands before the command starts means
# it never starts.
[ "$AWL_SCHEDULER" != slurm ] || trap 'awl_ext_term=1' TERM
if [ -f cancel ] || [ "$awl_ext_term" = 1 ]; then
  awl_log "cancel requested before the command started; it never ran"
  awl_finish '' cancelled
fi
# Dependencies: hold on this machine until the parents' conditions hold (see "Dependencies" above).
[ "$AWL_AFTER_N$AWL_AFTER_FAILED" = 0 ] || awl_after_hold
# Queue admission: wait on this machine for the job's turn (see "Queue admission" above). The runtime timeout
# counts from the end of this wait.
if [ -n "$AWL_QUEUE$AWL_RESOURCES" ]; then
  awl_q_admit
  if [ -f cancel ]; then
    awl_log "cancel requested before the command started; it never ran"
    awl_finish '' cancelled
  fi
fi
awl_setsid=$(command -v setsid 2>/dev/null)
awl_now
awl_started_at=$awl_t
awl_up_ok=0
# shellcheck disable=SC2034 # awl_x: the rest of the line
{ read -r awl_u awl_x </proc/uptime; } 2>/dev/null && case $awl_u in *.[0-9][0-9]) awl_up_ok=1 ;; esac
awl_clock
awl_started_cs=$awl_cs

# shellcheck disable=SC2153 # AWL_CWD comes from spec.sh
case $AWL_CWD in
/*) awl_cwd=$AWL_CWD ;;
*) awl_cwd=$awl_start_dir/$AWL_CWD ;;
esac
if ! cd "$awl_cwd"; then
  cd "$awl_dir" || exit 2
  awl_launch_failed "cannot change to working directory '$AWL_CWD'; create it or choose another cwd"
fi

# How the job's processes are tracked (see "The whole job"); the CPU time the wrapper's children had so far.
awl_track_setup
awl_log "tracking the job's processes $awl_track_why"
awl_trk=environment
[ -z "$awl_cg_track" ] || awl_trk=cgroup
awl_ru0='' awl_rs0=''
awl_ticks "$$" && awl_ru0=$awl_cu awl_rs0=$awl_csy

# The monitor starts first (the command runs in the foreground below, so that it keeps default SIGINT/SIGQUIT
# handling: sh ignores both in background jobs when job control is off).
# A monitor.stop left by an earlier attempt in this directory (a Slurm requeue) would stop the monitor at once.
rm -f "$awl_dir/monitor.stop"
(cd "$awl_dir" && awl_monitor) &
awl_mon=$!

# The command's own process. Not a process-group leader (no job control), so setsid(1) calls setsid() without
# forking: the exec'd command keeps this pid and leads its own session and group (pgid = pid). Without setsid,
# job control (`set -m`, works in bash) gives it its own group; otherwise pgid is empty and only pid is signalled.
if [ -n "$awl_setsid" ]; then
  set -- "$awl_setsid" "$@"
  awl_group=1
else
  awl_group=0
  set -m 2>/dev/null
  case $- in *m*) awl_group=1 ;; esac
fi
(
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
  exec "$@"
)
awl_code=$?
awl_clock
awl_end_cs=$awl_cs
awl_ru1='' awl_rs1=''
awl_ticks "$$" && awl_ru1=$awl_cu awl_rs1=$awl_csy
awl_epoch
awl_cmd_end=$awl_t
set +m 2>/dev/null

cd "$awl_dir" || exit 2
pid='' pgid='' pid_start=''
awl_read_started
# what the command left, stopped (or kept); the monitor is stopped in there (see "The whole job")
awl_job_end
# `started` is written just before the exec: without it the command never ran (cancelled during start-up, or no
# room to record its start).
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
awl_finish "$awl_code" "$awl_reason"
