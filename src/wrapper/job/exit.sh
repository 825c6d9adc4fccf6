# The exit record: its reservation at start-up, the record written over it at the end (awl_finish), which then frees
# the job's queue slot and wakes its dependents. A fragment of wrapper.sh.
# shellcheck shell=sh
# The exit record's reservation (see exit.tmp atop wrapper.sh). The record is ASCII, so ${#var} counts its bytes.
awl_reserve_bytes=512
awl_reserve_exit() {
  # the launcher's reservation, checked without a fork: one line of 511 spaces, nothing after it
  awl_l='' awl_x=''
  { IFS= read -r awl_l && ! IFS= read -r awl_x && [ -z "$awl_x" ]; } 2>/dev/null <exit.tmp &&
    [ "${#awl_l}" -eq $((awl_reserve_bytes - 1)) ] && case $awl_l in *[!\ ]*) false ;; esac && return 0
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
  if { printf "%s\n%${awl_pad}s\n" "$1" '' 1<>exit.tmp; } 2>/dev/null && LC_ALL=C mv -f exit.tmp exit; then
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
    o_drop=${o_drop:-0} e_drop=${e_drop:-0}
  fi
  awl_stat
  if [ "$awl_cap" -gt 0 ]; then awl_cap_trim "$awl_tailcap" all; fi
  # A full disk now (a one-byte write needs a block) or earlier (the marker): the record says so.
  { printf x >no_space.probe; } 2>/dev/null || : >no_space
  awl_nospace=''
  [ ! -e no_space ] || awl_nospace='
no_space=1'
  # the command's end (the whole job's processes were stopped after it), or now when it never ran
  [ -n "${awl_cmd_end-}" ] || { awl_now && awl_cmd_end=$awl_t; }
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
  # after the record, which a client waits for: the probe, monitor.stop (the stopped monitor's) and the sizes' listing,
  # with one rm
  rm -f no_space.probe monitor.stop exit.ls
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

