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
# shellcheck shell=sh

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
  awl_q_since=$awl_t awl_q_said='' awl_hold=$AWL_TICK
  # Set before the entry (the wake address) exists: an untrapped USR1 would end this wrapper.
  trap awl_wake USR1 USR2
  awl_q_lock
  awl_q_enqueue
  awl_q_unlock
  while :; do
    awl_woke=0
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
    # far back (entries not read): 60 s; near the front: 8 s
    if [ "$awl_q_rest" -gt 0 ]; then awl_hold_nap 60; else awl_hold_nap 8; fi
  done
}

# awl_q_mark_running PID PGID (the command's own process, before `started`): add its pid and group to the slot,
# so that a slot whose wrapper was killed stays held while the command still runs.
awl_q_mark_running() {
  { cat "$awl_q_slot" && printf '%s\n' "pid=$1" "pgid=$2"; } >"$awl_q_root/tmp/$AWL_JOB_ID" 2>/dev/null &&
    mv -f "$awl_q_root/tmp/$AWL_JOB_ID" "$awl_q_slot"
}

