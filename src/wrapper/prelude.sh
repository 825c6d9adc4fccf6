# Awaitless shell prelude: the process, boot and queue-entry readers every program on a job's machine shares
# (wrapper.sh, cancel.sh and the host programs in host/). Spliced in by src/wrapper/shell-text.ts at a program's include
# line for it; functions only, every variable they set starts with awl_ or e_.
# shellcheck shell=sh

# awl_stat_line LINE: sets awl_st, awl_ppid, awl_pg, awl_sid and awl_start to fields 3, 4, 5, 6 and 22 (state,
# parent, process group, session, start time in clock ticks since boot) of a /proc/PID/stat line. They are counted
# after the ") " that closes the command name, which may itself hold spaces; awl_start is '' when the line is short.
# shellcheck disable=SC2034,SC2317 # the includer reads the fields it needs
awl_stat_line() {
  # shellcheck disable=SC2086 # the fields after the name are numbers and a state letter: split, never globbed
  set -- ${1##*") "}
  awl_st=${1-} awl_ppid=${2-} awl_pg=${3-} awl_sid=${4-} awl_start=''
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
  e_queue='' e_res='' e_wpid='' e_wstart='' e_boot='' e_pid='' e_pgid='' e_kept='' e_cg=''
  # the job the entry is for, by its name: running/JOB_ID or waiting/TICKET.JOB_ID
  e_job=${1##*/}
  e_job=${e_job#*.}
  { while IFS='=' read -r awl_k awl_v; do
    case $awl_k in
    queue) e_queue=$awl_v ;;
    resources) e_res=$awl_v ;;
    wrapper_pid) e_wpid=$awl_v ;;
    proc_start) e_wstart=$awl_v ;;
    boot_id) e_boot=$awl_v ;;
    pid) e_pid=$awl_v ;;
    pgid) e_pgid=$awl_v ;;
    kept) e_kept=$awl_v ;;
    cgroup) e_cg=$awl_v ;;
    esac
  done <"$1"; } 2>/dev/null || return 1
  [ -n "$e_wpid" ]
}

# awl_q_entry_alive: is the entry read last owned by a live wrapper of its job, or by the job's processes still
# running (its command's group, or what it kept running after its end: `kept=1`)? A different boot ID (awl_boot_id:
# this machine's) means the machine rebooted since: the entry is dead whatever its pids say. An entry is untrusted:
# the wrapper it names must be the wrapper of its job (awl_is_wrapper_of), the group's leader must carry its job ID
# (awl_carries_job), so a forged entry naming some live process holds nothing. Pids 0 and 1 are never a job's: kill -0
# -1 would probe every process.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_q_entry_alive() {
  [ -z "$e_boot" ] || [ -z "$awl_boot_id" ] || [ "$e_boot" = "$awl_boot_id" ] || return 1
  awl_pid_alive "$e_wpid" "$e_wstart" && awl_is_wrapper_of "$e_wpid" "${e_job-}" && return 0
  [ -n "${e_job-}" ] || return 1
  case $e_pid in '' | *[!0-9]* | 0 | 1) e_pid='' ;; esac
  case $e_pgid in '' | *[!0-9]* | 0 | 1) e_pgid='' ;; esac
  if [ -n "$e_pid$e_pgid" ] && awl_group_alive "$e_pid" "$e_pgid" &&
    { awl_carries_job "${e_pgid:-$e_pid}" "$e_job" || awl_env_has_job "$e_job"; }; then
    return 0
  fi
  [ "${e_kept-}" = 1 ] || return 1
  case ${e_cg-} in
  /*/awaitless-"$e_job".*) case $e_cg in */../* | *[!A-Za-z0-9_./:@,-]*) return 1 ;; esac ;;
  ?*) return 1 ;;
  esac
  if [ -n "$e_cg" ]; then
    awl_l=''
    { read -r awl_l <"$e_cg/cgroup.procs"; } 2>/dev/null
    [ -n "$awl_l" ]
    return
  fi
  awl_env_has_job "$e_job"
}

# awl_catches PID SIGNAL_NUMBER: has PID a handler for that signal (bit N-1 of sigcatch, field 34 of /proc/PID/stat:
# the shell's `read` takes a byte per system call, and the stat line is half of /proc/PID/status up to SigCgt)?
# Without /proc: yes.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_catches() {
  [ -r /proc/self/stat ] || return 0
  awl_l=''
  { read -r awl_l <"/proc/$1/stat"; } 2>/dev/null || return 1
  # shellcheck disable=SC2086 # numbers and a state letter after the name
  set -- "$2" ${awl_l##*") "}
  [ $# -ge 33 ] || return 1
  [ $((${33} >> ($1 - 1) & 1)) -eq 1 ]
}

# awl_is_wrapper_of PID JOB_ID: is PID a wrapper running a job directory of JOB_ID (its command line is a shell,
# .../bin/wrapper-HASH.sh, then the directory: .../JOB_ID or .../JOB_ID/attempts/N; JOB_ID '' stands for any job)?
# The command line is read with `read`, which drops the NUL bytes between its arguments: no fork. Without /proc
# nothing can be compared: yes.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_is_wrapper_of() {
  [ -r /proc/self/stat ] || return 0
  awl_cmdl=''
  { IFS= read -r awl_cmdl <"/proc/$1/cmdline"; } 2>/dev/null
  case $awl_cmdl in
  */bin/wrapper-*.sh/*/"${2:-job_}"*) ;;
  *) return 1 ;;
  esac
  [ -n "$2" ] || return 0
  case $awl_cmdl in */"$2" | */"$2"/attempts/*) return 0 ;; esac
  return 1
}

# awl_carries_job PID JOB_ID: does PID's environment hold AWAITLESS_JOB_ID=JOB_ID (the wrapper exports it to the
# command; every process the command starts inherits it unless it clears it)? An environment this user may not
# read (another user's process, a setuid one) does not: nothing is signalled on its account.
# shellcheck disable=SC2317 # not every includer calls every reader
awl_carries_job() {
  grep -q -s -a -z -x -F "AWAITLESS_JOB_ID=$2" "/proc/$1/environ" 2>/dev/null
}

# awl_env_has_job JOB_ID: is any process this user may read alive with AWAITLESS_JOB_ID=JOB_ID in its environment?
# shellcheck disable=SC2317 # not every includer calls every reader
awl_env_has_job() {
  grep -l -q -s -a -z -x -F "AWAITLESS_JOB_ID=$1" /proc/[0-9]*/environ 2>/dev/null
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
    # the dependent's own wrapper (named by the file) with its trap set: USR1 would end any other process
    awl_pid_alive "$awl_wp" "$awl_ws" && awl_is_wrapper_of "$awl_wp" "${awl_f##*/}" && awl_catches "$awl_wp" 10 &&
      kill -USR1 "$awl_wp" 2>/dev/null
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
