# Awaitless shell prelude: the process, boot and queue-entry readers every program on a job's machine shares
# (wrapper.sh, cancel.sh and the host programs in host/). Spliced in by src/wrapper/shell-text.ts at a program's include
# line for it; functions only, every variable they set starts with awl_ or e_.
# shellcheck shell=sh

# awl_stat_line LINE: sets awl_st, awl_ppid, awl_pg and awl_start to fields 3, 4, 5 and 22 (state, parent,
# process group, start time in clock ticks since boot) of a /proc/PID/stat line. They are counted after the ") "
# that closes the command name, which may itself hold spaces; awl_start is '' when the line is short.
# shellcheck disable=SC2034,SC2317 # the includer reads the fields it needs
awl_stat_line() {
  # shellcheck disable=SC2086 # the fields after the name are numbers and a state letter: split, never globbed
  set -- ${1##*") "}
  awl_st=${1-} awl_ppid=${2-} awl_pg=${3-} awl_start=''
  [ $# -ge 20 ] || return 0
  shift 19
  awl_start=$1
}

# awl_proc_stat PID: awl_stat_line of /proc/PID/stat; fails when the process (or /proc) is not there.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_proc_stat() {
  { read -r awl_l <"/proc/$1/stat"; } 2>/dev/null || return 1
  awl_stat_line "$awl_l"
}

# awl_read_boot_id: sets awl_boot_id to the kernel's boot ID ('' without /proc).
# shellcheck disable=SC2317 # not every includer calls every reader
awl_read_boot_id() {
  awl_boot_id=''
  [ -r /proc/sys/kernel/random/boot_id ] || return 0
  read -r awl_boot_id </proc/sys/kernel/random/boot_id
}

# awl_pid_alive PID [START]: is PID alive, not a zombie, and (START known) still the process that started then?
# Without /proc only kill -0 can tell.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_pid_alive() {
  [ -n "$1" ] || return 1
  if [ -r /proc/self/stat ]; then
    awl_proc_stat "$1" || return 1
    [ "$awl_st" != Z ] && [ "$awl_st" != X ] || return 1
    [ -n "${2-}" ] && [ -n "$awl_start" ] || return 0
    [ "$awl_start" = "$2" ]
    return
  fi
  kill -0 "$1" 2>/dev/null
}

# awl_group_alive PID PGID: is any live (non-zombie) process left in process group PGID (or, without a group, is
# PID alive)? Zombies are skipped because an init that never reaps (some containers) would otherwise make a dead
# group look alive forever.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_group_alive() {
  if [ -z "$2" ]; then
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null
    return
  fi
  kill -0 -"$2" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  for awl_f in /proc/[0-9]*/stat; do
    { read -r awl_l <"$awl_f"; } 2>/dev/null || continue
    awl_stat_line "$awl_l"
    [ "$awl_pg" = "$2" ] && [ "$awl_st" != Z ] && return 0
  done
  return 1
}

# awl_q_read FILE: sets e_* from a queue entry (key=value: queue resources wrapper_pid proc_start boot_id [pid
# pgid]); fails when the entry is gone or incomplete.
# shellcheck disable=SC2034,SC2317 # the includer reads the fields it needs
awl_q_read() {
  e_queue='' e_res='' e_wpid='' e_wstart='' e_boot='' e_pid='' e_pgid=''
  { while IFS='=' read -r awl_k awl_v; do
    case $awl_k in
    queue) e_queue=$awl_v ;;
    resources) e_res=$awl_v ;;
    wrapper_pid) e_wpid=$awl_v ;;
    proc_start) e_wstart=$awl_v ;;
    boot_id) e_boot=$awl_v ;;
    pid) e_pid=$awl_v ;;
    pgid) e_pgid=$awl_v ;;
    esac
  done <"$1"; } 2>/dev/null || return 1
  [ -n "$e_wpid" ]
}

# awl_q_entry_alive: is the entry read last owned by a live wrapper, or by a command group still running? A
# different boot ID (awl_boot_id: this machine's) means the machine rebooted since: the entry is dead whatever its
# pids say. Pids 0 and 1 are never a job's (a forged entry): kill -0 -1 would probe every process.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_q_entry_alive() {
  [ -z "$e_boot" ] || [ -z "$awl_boot_id" ] || [ "$e_boot" = "$awl_boot_id" ] || return 1
  awl_pid_alive "$e_wpid" "$e_wstart" && return 0
  case $e_pid in '' | *[!0-9]* | 0 | 1) e_pid='' ;; esac
  case $e_pgid in '' | *[!0-9]* | 0 | 1) e_pgid='' ;; esac
  [ -n "$e_pid$e_pgid" ] || return 1
  awl_group_alive "$e_pid" "$e_pgid"
}

# awl_wake_dependents DIR: USR1 to every live held dependent whose wake address is in DIR/dependents (wrapper.sh
# "Dependencies"); only a process started when the address says (a reused pid is not woken: USR1 would end it).
# shellcheck disable=SC2317 # not every includer calls every reader
awl_wake_dependents() {
  if [ ! -d "$1/dependents" ] || [ -h "$1/dependents" ]; then return 0; fi
  for awl_f in "$1"/dependents/*; do
    if [ ! -f "$awl_f" ] || [ -h "$awl_f" ]; then continue; fi
    awl_wp='' awl_ws=''
    { while IFS='=' read -r awl_k awl_v; do
      case $awl_k in
      wrapper_pid) awl_wp=$awl_v ;;
      proc_start) awl_ws=$awl_v ;;
      esac
    done <"$awl_f"; } 2>/dev/null
    case $awl_wp in '' | *[!0-9]* | 0 | 1) continue ;; esac
    [ -n "$awl_ws" ] || [ ! -r /proc/self/stat ] || continue
    awl_pid_alive "$awl_wp" "$awl_ws" && kill -USR1 "$awl_wp" 2>/dev/null
  done
  return 0
}

# awl_put_final DIR OUTCOME ATTEMPT: DIR (a retried job's first attempt's directory) gets its `final` record,
# outcome=ok|failed and attempt=N: the job's last attempt ended so and no retry follows. An existing record is kept
# (every writer states the same end); the text goes to a fresh name with noclobber, then is renamed, never through a
# symlink.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_put_final() {
  [ -d "$1" ] && [ ! -h "$1/final" ] || return 1
  [ ! -f "$1/final" ] || return 0
  rm -f "$1/final.tmp.$$"
  { (set -C && printf '%s\n' "outcome=$2" "attempt=$3" >"$1/final.tmp.$$") &&
    mv -f "$1/final.tmp.$$" "$1/final"; } 2>/dev/null
}
