# The log cap (wrapper.sh "Log cap"): a stream's live file rotated into STREAM.prev, its first bytes kept in STREAM.head,
# the rest counted in STREAM.dropped, the command's group frozen for the last copy. A fragment of wrapper.sh; uses
# files.sh, prelude.sh and monitor.sh's awl_signal_group.
# shellcheck shell=sh
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
    # (the group did not stop in time, e.g. on a busy host: the next check tries again, within a tick and even if
    # nothing is written meanwhile — a command may wait for the rotation before it writes more)
    rm -f "$1.snap"
    awl_cap_retry=1
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

# awl_cap_trim KEEP [all]: rotates each stream whose live file (with `all`: previous and live bytes together) holds
# more than KEEP bytes, keeping its last KEEP; updates sz_out sz_outp o_drop (stdout) and sz_err sz_errp e_drop.
awl_cap_trim() {
  awl_o=$sz_out awl_e=$sz_err
  [ "${2-}" != all ] || awl_o=$((sz_out + sz_outp)) awl_e=$((sz_err + sz_errp))
  if [ "$awl_o" -gt "$1" ]; then
    awl_rotate stdout "$sz_outp" "$o_drop" "$1" && o_drop=$awl_drop sz_outp=$awl_prev sz_out=0
  fi
  if [ "$awl_e" -gt "$1" ]; then
    awl_rotate stderr "$sz_errp" "$e_drop" "$1" && e_drop=$awl_drop sz_errp=$awl_prev sz_err=0
  fi
  return 0
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
  # The group's threads, found with one grep over /proc (field 5 of a stat line, after the state and the parent, is
  # the process group) rather than by reading every process's line in the shell, a byte per system call (a busy host
  # has thousands); a name in field 2 can fake a match, so each one found is read again. A group being stopped gains
  # no process (a fork that meets the pending STOP is restarted by the kernel), so only these need looking at again.
  # The list goes through tracked.mon, not a command substitution (see awl_monitor on bash's traps).
  awl_fz_left=''
  { grep -l -s -E "\) . -?[0-9]+ $pgid " /proc/[0-9]*/stat >tracked.mon; } 2>/dev/null
  { while read -r awl_fz_f; do
    { read -r awl_l <"$awl_fz_f"; } 2>/dev/null || continue
    awl_stat_line "$awl_l"
    [ "$awl_pg" = "$pgid" ] || continue
    for awl_fz_t in "${awl_fz_f%/stat}"/task/[0-9]*/stat; do awl_fz_left="$awl_fz_left $awl_fz_t"; done
  done <tracked.mon; } 2>/dev/null
  if [ -z "$awl_fz_left" ] && kill -0 -"$pgid" 2>/dev/null; then
    # the group lives, yet none of it was listed (no room for the list on a full disk): the rotation is postponed
    awl_thaw
    return 1
  fi
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

