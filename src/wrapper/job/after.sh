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
# AWL_AFTER_i_FINAL=1: the parent has retries (core/retries/), and PARENT_DIR is its first attempt's directory. An
#   attempt's exit record or dead wrapper says nothing then (a retry may follow); the parent has ended only once
#   PARENT_DIR/final exists (outcome=ok|failed attempt=N), written by the last attempt's wrapper when its end is
#   certainly the last (awl_final_of), else by the client that records the job's end (host/settle.sh). Both wake the
#   dependents registered in PARENT_DIR/dependents.
# shellcheck shell=sh

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
  awl_a_since=$awl_t awl_a_said='' awl_hold=$AWL_TICK
  # Set before the wake addresses exist: an untrapped USR1 would end this wrapper.
  trap awl_wake USR1 USR2
  awl_a_each awl_a_register
  while :; do
    if [ -f cancel ]; then
      awl_a_failed=''
      awl_a_each awl_a_unregister
      awl_log "cancel requested while waiting for dependencies; the command never ran"
      awl_finish '' cancelled
    fi
    awl_woke=0 awl_a_wait=''
    awl_a_each awl_a_check
    [ -z "$awl_a_failed" ] || awl_a_end
    [ -n "$awl_a_wait" ] || break
    if [ "$awl_a_wait" != "$awl_a_said" ]; then
      awl_a_said=$awl_a_wait
      awl_put queued "after=$awl_a_wait" "since=$awl_a_since" "wrapper_pid=$awl_wrapper_pid" \
        "proc_start=$awl_proc_start" "boot_id=$awl_boot_id" ||
        awl_log "dependencies: could not write the queued record"
    fi
    awl_hold_nap 60
  done
  awl_a_end
}

# awl_final_of CODE REASON: awl_fo = ok | failed when this attempt's end is certainly the job's last, '' when a
# client may retry it: its class (exit: the command failed; infrastructure: the launch failed) is in AWL_RETRY_ON and
# AWL_RETRY_LEFT > 0 (core/retries/retry-policy.ts retryDue decides the same from the same record).
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

