# The `started` record read back by the wrapper and its monitor: the command's pid, group and start time, with forged
# values refused. A fragment of wrapper.sh.
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

