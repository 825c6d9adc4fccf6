#!/bin/sh
# Awaitless job wrapper, protocol 1: runs one job, watches it, and records its outcome in its job directory.
# POSIX sh only (dash, bash, busybox ash) plus common utilities. The TypeScript side is src/wrapper/protocol.ts;
# docs/wrapper-protocol.md says the same as this header in more words.
#
# Usage: sh wrapper.sh JOB_DIR   (started detached, in its own session; its stdout/stderr go to JOB_DIR/wrapper.log)
#   [AWL_LAUNCH_CLOCK=EPOCH_CS:UPTIME_CS:BOOT_ID in its environment: the local launcher's reading of its clocks, which
#   spares the wrapper a `date` (awl_start_clock in job/setup.sh); AWL_LAUNCH_PRIMED=1: the launcher started the
#   kernel's wait before the first move between cgroups itself (awl_track_prime then writes nothing). Both taken
#   out before anything else starts. Not arguments: a wrapper is known by its command line ending in the job
#   directory (awl_is_wrapper_of).]
#
# Files in JOB_DIR (umask 077: every file 0600; nothing is written outside JOB_DIR; the command itself gets the
# umask the wrapper was started with):
#   spec.sh        client -> wrapper, sourced with `.`: AWL_JOB_ID AWL_CWD AWL_TIMEOUT AWL_GRACE AWL_TICK
#                  AWL_HEARTBEAT [AWL_CHECK_MAX] AWL_LOG_CAP [AWL_SCHEDULER], `set -- argv...`, and awl_env() (exports applied only to
#                  the command). AWL_SCHEDULER=slurm: see "Cancel" below.
#                  Queued jobs add AWL_QUEUE AWL_QUEUE_CONCURRENCY AWL_RESOURCES AWL_QUEUE_DIR [AWL_QUEUE_LOCK]
#                  (see "Queue admission", job/queue.sh); the command then also gets AWAITLESS_QUEUE and AWAITLESS_RESOURCES.
#                  [AWL_KEEP_LEFTOVERS=1]: what the command leaves running is kept (see "The whole job", job/job-end.sh).
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
#   exit.ls        scratch: the same listing for the exit record, made while the monitor stops (removed after it).
#   timed_out | cancelled   marker (content: epoch seconds), written before the group is signalled: whoever finds
#                  one knows TERM went out then. A client stopping a group whose wrapper is gone claims `cancelled`
#                  with noclobber first (see "Cancel").
#   STREAM.head STREAM.prev STREAM.dropped   log cap (AWL_LOG_CAP > 0): see "Log cap" below (job/log-cap.sh).
#   exit           key=value: exit_code signal reason finished_at descendants_alive stdout_dropped stderr_dropped
#                  stdout_bytes stderr_bytes [no_space=1] [dependency=ID:ON] wrapper_pid proc_start leftovers
#                  leftovers_action [ran_cs] [tracking] [resources cpu_user_us cpu_system_us max_rss_bytes oom_kills]
#                  (see "The whole job"), then a line of spaces that pads it to 512 bytes. Written atomically
#                  (exit.tmp -> mv); the last file written. finished_at is when the command ended.
#   leftovers      `PID COMMAND` lines: the first 20 processes the command left running (see "The whole job").
#   leftovers.stopped   marker (content: epoch seconds): a client's cancel sent TERM to what the job kept running.
#   tracked.ls tracked.mon   scratch: the lists of the job's processes found by environment (tracked.mon also the
#                  command's group while a log rotation stops it).
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
#   127: command not found; 126 also when the command, named by its path, is a directory or not executable (both
#   recorded as reason=exited, like a shell would). Empty with reason=cancelled: the
#   cancel file existed before the command started (or before its queue admitted it), so it never ran.
# reason: exited | timed_out | cancelled | launch_failed | dependency_failed (then dependency=ID:ON; see
#   "Dependencies", job/after.sh).
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
#   quiet spell; see awl_monitor in job/monitor.sh). A reader shows head + [dropped-HEAD bytes omitted] + prev + live;
#   the tail is the end of prev + live; bytes written = dropped + size(prev) + size(live).
#   No byte is lost between the copy and the truncation: the bulk is copied while the command runs, then the
#   command's process group is stopped (SIGSTOP, every thread seen stopped in /proc), the rest copied, the live
#   file truncated and the group resumed (SIGCONT; a watchdog in its own session resumes it after 5 s should the
#   wrapper die meanwhile). A group that does not stop within 2 s is resumed and the rotation postponed. Not
#   covered: writers outside the command's process group (a descendant that left it), and jobs without a group of
#   their own (no setsid) or without /proc: for those, bytes written between the copy reaching end-of-file and the
#   truncation are lost and not counted.

# the umask it was started with, which the command gets back: /proc's `Umask:` line (no fork), else `umask`
awl_umask='' awl_x=''
{ read -r awl_x && read -r awl_x awl_umask; } </proc/self/status 2>/dev/null
case $awl_x/$awl_umask in Umask:/[0-7][0-7][0-7] | Umask:/[0-7][0-7][0-7][0-7]) ;; *) awl_umask=$(umask) ;; esac
umask 077
IFS=' 	
'

# The wrapper's parts, each a file of src/wrapper/job/ spliced in here (src/wrapper/shell-text.ts); each file's header
# says what it holds.
# awaitless:include job/files.sh
# awaitless:include job/clock.sh
# awaitless:include job/log-cap.sh
# awaitless:include job/setup.sh
# awaitless:include job/command.sh
# The shared readers: awl_stat_line, awl_proc_stat, awl_read_boot_id, awl_pid_alive, awl_group_alive, awl_q_read,
# awl_q_entry_alive (src/wrapper/prelude.sh, spliced in here when the wrapper is embedded).
# awaitless:include prelude.sh

# Which processes are the job's, how they are listed and stopped, what they cost: awl_track_setup, awl_track_join,
# awl_job_scan, awl_job_stop, awl_usage... (src/wrapper/tracking.sh, spliced in here). See "The whole job" (job/job-end.sh).
# awaitless:include tracking.sh

# awaitless:include job/monitor.sh
# awaitless:include job/exit.sh
# awaitless:include job/queue.sh
# awaitless:include job/after.sh
# awaitless:include job/job-end.sh
# --- main -------------------------------------------------------------------------------------------------
awl_launch_clock=${AWL_LAUNCH_CLOCK-} awl_launch_primed=${AWL_LAUNCH_PRIMED-}
unset AWL_LAUNCH_CLOCK AWL_LAUNCH_PRIMED
awl_enter "${1-}"
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
# A job that starts at once starts the kernel's wait before its first move between cgroups now, while the wrapper's
# start goes on (awl_track_prime; nothing to write when the local launcher did so as it began); one that waits first
# (a parent, a queue) starts it after the wait, whatever the launcher did then.
[ "$AWL_AFTER_N$AWL_AFTER_FAILED$AWL_QUEUE$AWL_RESOURCES" != 0 ] || awl_track_prime
awl_spec_checked $#
awl_identity
awl_wait_turn
[ "${awl_primed-}" = 1 ] || { awl_launch_primed='' && awl_track_prime; }
awl_find_setsid
awl_start_clock
awl_enter_cwd
awl_track_start
# The monitor starts first; a monitor.stop left by an earlier attempt in this directory (a Slurm requeue) would stop
# it at once.
[ ! -e "$awl_dir/monitor.stop" ] || rm -f "$awl_dir/monitor.stop"
(cd "$awl_dir" && awl_monitor) &
awl_mon=$!
awl_run "$@"
cd "$awl_dir" || exit 2
pid='' pgid='' pid_start=''
awl_read_started
# what the command left, stopped (or kept); the monitor is stopped in there (see "The whole job", job/job-end.sh)
awl_job_end
awl_outcome
awl_finish "$awl_code" "$awl_reason"
