# Awaitless job tracking: which processes belong to a job, how they are found, listed and stopped once its command has
# ended, and what the job cost. Spliced into wrapper.sh and cancel.sh (src/wrapper/shell-text.ts); functions only,
# every variable they set starts with awl_. docs/wrapper-protocol.md, "The whole job", says the same in more words.
#
# A process belongs to job J when it is in J's cgroup: one the wrapper made for the command (root, or a cgroup v2
# subtree delegated to the user), or the scheduler's cgroup the wrapper itself runs in (Slurm). Without one, when it
# is one of the user's processes whose environment carries AWAITLESS_JOB_ID=J (the wrapper exports it to the command;
# every descendant inherits it), or when it is in the command's process group or session. A process that cleared its
# environment and left the group and the session is the one that environment tracking cannot see.
#
# Inputs the includer sets: AWL_JOB_ID, pid and pgid (the command, from `started`), awl_exclude (pids whose own
# processes are not the job's: the wrapper and its monitor, or cancel.sh's shell: they and their direct children,
# the command excepted), awl_cg_track (the tracking cgroup's directory, '' by environment), awl_cg_inherited (1: a
# cgroup the wrapper runs in itself, so its own helpers are members too).
# shellcheck shell=sh
# shellcheck disable=SC2154 # awl_st, awl_pg… (prelude.sh), awl_exclude, awl_t (the includer) are set elsewhere

# awl_cg_mounts: sets awl_cg2 to the cgroup v2 mount point and awl_cg1_memory, awl_cg1_cpuacct, awl_cg1_pids,
# awl_cg1_freezer to the v1 hierarchies' ('' each when not mounted): found at their usual places under
# /sys/fs/cgroup by the files each holds (no read of the mount table), else from /proc/self/mountinfo, where mounts
# of a subtree and paths with escapes are skipped. Fails without /proc/self/mountinfo.
awl_cg_mounts() {
  awl_cg2='' awl_cg1_memory='' awl_cg1_cpuacct='' awl_cg1_pids='' awl_cg1_freezer=''
  [ -r /proc/self/mountinfo ] || return 1
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    awl_cg2=/sys/fs/cgroup
    return 0
  fi
  [ ! -f /sys/fs/cgroup/unified/cgroup.controllers ] || awl_cg2=/sys/fs/cgroup/unified
  [ ! -f /sys/fs/cgroup/memory/memory.max_usage_in_bytes ] || awl_cg1_memory=/sys/fs/cgroup/memory
  for awl_x in cpuacct cpu,cpuacct cpuacct,cpu; do
    [ -f "/sys/fs/cgroup/$awl_x/cpuacct.stat" ] || continue
    awl_cg1_cpuacct=/sys/fs/cgroup/$awl_x
    break
  done
  [ ! -f /sys/fs/cgroup/pids/cgroup.procs ] || awl_cg1_pids=/sys/fs/cgroup/pids
  [ ! -f /sys/fs/cgroup/freezer/cgroup.procs ] || awl_cg1_freezer=/sys/fs/cgroup/freezer
  [ -z "$awl_cg2$awl_cg1_memory$awl_cg1_cpuacct$awl_cg1_pids$awl_cg1_freezer" ] || return 0
  # shellcheck disable=SC2034 # awl_x: fields not needed
  while read -r awl_x awl_x awl_x awl_mr awl_mp awl_rest; do
    [ "$awl_mr" = / ] || continue
    case $awl_mp in *\\* | *[!A-Za-z0-9_./:@,-]*) continue ;; esac
    awl_fs=${awl_rest#* - }
    case $awl_fs in
    'cgroup2 '*) [ -n "$awl_cg2" ] || awl_cg2=$awl_mp ;;
    'cgroup '*)
      awl_o=,${awl_fs##* },
      case $awl_o in *,memory,*) awl_cg1_memory=$awl_mp ;; esac
      case $awl_o in *,cpuacct,*) awl_cg1_cpuacct=$awl_mp ;; esac
      case $awl_o in *,pids,*) awl_cg1_pids=$awl_mp ;; esac
      case $awl_o in *,freezer,*) awl_cg1_freezer=$awl_mp ;; esac
      ;;
    esac
  done </proc/self/mountinfo
  return 0
}

# awl_cg_self: sets awl_cgp2, awl_cgp_memory, awl_cgp_cpuacct, awl_cgp_pids, awl_cgp_freezer to this process's cgroup
# in each hierarchy (from /proc/self/cgroup; '' where it is in none).
awl_cg_self() {
  awl_cgp2='' awl_cgp_memory='' awl_cgp_cpuacct='' awl_cgp_pids='' awl_cgp_freezer=''
  # shellcheck disable=SC2034 # awl_x: the hierarchy's number
  { while IFS=: read -r awl_x awl_ctl awl_p; do
    case $awl_ctl in
    '') awl_cgp2=$awl_p ;;
    *)
      case ,$awl_ctl, in *,memory,*) awl_cgp_memory=$awl_p ;; esac
      case ,$awl_ctl, in *,cpuacct,*) awl_cgp_cpuacct=$awl_p ;; esac
      case ,$awl_ctl, in *,pids,*) awl_cgp_pids=$awl_p ;; esac
      case ,$awl_ctl, in *,freezer,*) awl_cgp_freezer=$awl_p ;; esac
      ;;
    esac
  done </proc/self/cgroup; } 2>/dev/null
}

# awl_cg_place MOUNT PATH: where the job's cgroup goes in one hierarchy: beside where this wrapper runs (MOUNT, then
# PATH without any job cgroup of another job: a job started from inside another one is not part of it, so the wrapper
# leaves that cgroup), named awaitless-JOB_ID.ATTEMPT. Sets awl_cgd; fails when the place is not writable (not root,
# not delegated).
awl_cg_place() {
  awl_cgd=''
  [ -n "$1" ] && [ -n "$2" ] || return 1
  awl_cgb=${2%%/awaitless-job_*}
  [ "$awl_cgb" != / ] || awl_cgb=''
  case $awl_cgb in *[!A-Za-z0-9_./:@,-]* | */../*) return 1 ;; esac
  [ -w "$1$awl_cgb/cgroup.procs" ] || return 1
  # only out of another job's cgroup: a write to cgroup.procs costs a kernel grace period (milliseconds) even when the
  # process is already there (PATH "/" is the root, where awl_cgb is '')
  if [ "$awl_cgb" != "${2%/}" ]; then
    { echo "$$" >"$1$awl_cgb/cgroup.procs"; } 2>/dev/null || return 1
  fi
  awl_cgd=$1$awl_cgb/awaitless-$AWL_JOB_ID.$AWL_ATTEMPT
}

# awl_track_prime: the kernel makes the first move between cgroups after a quiet spell wait for an RCU grace period
# (5–25 ms on a two-core machine; forks go on meanwhile), and a move made during that wait, or soon after it, does not
# wait again. A background write of 0 (the writing process itself: a move to where it already is) to the cgroup.procs
# of this wrapper's own cgroup starts that wait at once, so the command's move into the job's cgroups, a few process
# starts later, finds it over. Only where awl_track_setup will make cgroups (its own cgroup writable; not by
# environment, not under Slurm); one fork, nothing waits for it. None when the local launcher wrote there already, as
# the launch began (awl_launch_primed, from AWL_LAUNCH_PRIMED): the look-up is still made (awl_track_setup uses it).
awl_track_prime() {
  awl_primed=1
  [ "${AWL_TRACKING:-${AWAITLESS_TRACKING:-auto}}" != environment ] && [ "${AWL_SCHEDULER-}" != slurm ] || return 0
  awl_cg_mounts && [ -r /proc/self/cgroup ] || return 0
  awl_cg_self
  # (awl_track_setup uses what was found here)
  awl_cg_known=1
  for awl_x in "$awl_cg2:$awl_cgp2" "$awl_cg1_memory:$awl_cgp_memory"; do
    case $awl_x in :* | *:) continue ;; esac
    awl_x=${awl_x%%:*}${awl_x#*:}
    awl_x=${awl_x%/}/cgroup.procs
    [ -w "$awl_x" ] || continue
    [ "${awl_launch_primed-}" != 1 ] || return 0
    { echo 0 >"$awl_x"; } 2>/dev/null &
    return 0
  done
  return 0
}

# awl_track_setup: decides how this job's processes are tracked (before the command starts). Sets awl_cg_track (the
# cgroup whose members are the job's; '' for environment tracking), awl_cg_dirs (the cgroups the command joins),
# awl_cg_cpu and awl_cg_mem (where its CPU time and peak memory are read), awl_cg_inherited, and awl_track_why (the
# words after "tracking …": which cgroup, or why by environment). The cgroups are made with one mkdir: cgroup v2
# where it may be written (its cpu.stat always; memory.peak where the memory controller is enabled for it), else v1
# memory and cpuacct, else v1 pids or freezer for the membership alone.
awl_track_setup() {
  awl_cg_track='' awl_cg_dirs='' awl_cg_cpu='' awl_cg_mem='' awl_cg_inherited='' awl_track_why=''
  if [ "${AWL_TRACKING:-${AWAITLESS_TRACKING:-auto}}" = environment ]; then
    awl_track_why="by environment: asked for (AWAITLESS_TRACKING=environment)"
    return 0
  fi
  if [ "${awl_cg_known-}" != 1 ]; then
    if ! awl_cg_mounts || [ ! -r /proc/self/cgroup ]; then
      awl_track_why="by environment: no /proc to find cgroups"
      return 0
    fi
    awl_cg_self
  fi
  if [ "${AWL_SCHEDULER-}" = slurm ]; then
    awl_track_inherit
    return 0
  fi
  awl_d2='' awl_dm='' awl_dc='' awl_dp=''
  if [ -n "$awl_cgp2" ] && awl_cg_place "$awl_cg2" "$awl_cgp2"; then
    awl_d2=$awl_cgd
    awl_x=''
    { read -r awl_x <"${awl_cgd%/*}/cgroup.subtree_control"; } 2>/dev/null
    case " $awl_x " in *" memory "*) ;; *) awl_cg_place "$awl_cg1_memory" "$awl_cgp_memory" && awl_dm=$awl_cgd ;; esac
  else
    awl_cg_place "$awl_cg1_memory" "$awl_cgp_memory" && awl_dm=$awl_cgd
    awl_cg_place "$awl_cg1_cpuacct" "$awl_cgp_cpuacct" && awl_dc=$awl_cgd
    if [ -z "$awl_dm$awl_dc" ]; then
      awl_cg_place "$awl_cg1_pids" "$awl_cgp_pids" || awl_cg_place "$awl_cg1_freezer" "$awl_cgp_freezer"
      awl_dp=$awl_cgd
    fi
  fi
  if [ -n "$awl_d2$awl_dm$awl_dc$awl_dp" ]; then
    # shellcheck disable=SC2086 # paths without spaces (awl_cg_place): split on the spaces between them
    mkdir $awl_d2 $awl_dm $awl_dc $awl_dp 2>/dev/null
  fi
  for awl_x in $awl_d2 $awl_dm $awl_dc $awl_dp; do
    [ -d "$awl_x" ] || continue
    awl_cg_dirs="$awl_cg_dirs $awl_x"
    [ -n "$awl_cg_track" ] || awl_cg_track=$awl_x
    case $awl_x in
    "$awl_d2")
      awl_cg_cpu=$awl_x
      [ ! -e "$awl_x/memory.peak" ] || awl_cg_mem=$awl_x
      ;;
    "$awl_dm") [ -n "$awl_cg_mem" ] || awl_cg_mem=$awl_x ;;
    "$awl_dc") awl_cg_cpu=$awl_x ;;
    esac
  done
  if [ -n "$awl_cg_track" ]; then
    awl_track_why="by cgroup $awl_cg_track"
  elif [ -z "$awl_cg2$awl_cg1_memory$awl_cg1_cpuacct$awl_cg1_pids$awl_cg1_freezer" ]; then
    awl_track_why="by environment: no cgroup file system is mounted"
  else
    awl_track_why="by environment: no cgroup this user may create (not root, no delegated cgroup v2 subtree)"
  fi
}

# awl_track_inherit: under Slurm the scheduler's cgroup for the job holds this wrapper and everything the command
# starts; it is read (never written): its members other than the wrapper's own are the job's. Only a cgroup of this
# Slurm job (its path names job_$SLURM_JOB_ID, as Slurm's cgroup plugins name them) is taken: any other cgroup the
# wrapper finds itself in may hold processes that are not the job's.
awl_track_inherit() {
  case ${SLURM_JOB_ID-} in
  '' | *[!0-9]*)
    awl_track_why="by environment: no Slurm job ID (SLURM_JOB_ID) to find the scheduler's cgroup by"
    return 0
    ;;
  esac
  for awl_x in "$awl_cg2:$awl_cgp2" "$awl_cg1_freezer:$awl_cgp_freezer" "$awl_cg1_pids:$awl_cgp_pids" \
    "$awl_cg1_cpuacct:$awl_cgp_cpuacct" "$awl_cg1_memory:$awl_cgp_memory"; do
    case $awl_x in :* | *:) continue ;; esac
    case ${awl_x#*:} in */job_"$SLURM_JOB_ID"/* | */job_"$SLURM_JOB_ID") ;; *) continue ;; esac
    [ -r "${awl_x%%:*}${awl_x#*:}/cgroup.procs" ] || continue
    [ -n "$awl_cg_track" ] || awl_cg_track=${awl_x%%:*}${awl_x#*:}
    case $awl_x in
    "$awl_cg1_memory:"* | "$awl_cg2:"*) [ -n "$awl_cg_mem" ] || awl_cg_mem=${awl_x%%:*}${awl_x#*:} ;;
    esac
    case $awl_x in
    "$awl_cg1_cpuacct:"* | "$awl_cg2:"*) [ -n "$awl_cg_cpu" ] || awl_cg_cpu=${awl_x%%:*}${awl_x#*:} ;;
    esac
  done
  if [ -n "$awl_cg_track" ]; then
    awl_cg_inherited=1
    awl_track_why="by the scheduler's cgroup $awl_cg_track"
  else
    awl_track_why="by environment: the scheduler's cgroup cannot be read"
  fi
}

# awl_track_join PID (the command's own process, before it execs the command): PID joins each cgroup made for it.
awl_track_join() {
  for awl_x in $awl_cg_dirs; do
    { echo "$1" >"$awl_x/cgroup.procs"; } 2>/dev/null || return 1
  done
  return 0
}

# awl_track_drop: removes the cgroups made for the job (only empty ones go: rmdir), with one rmdir.
awl_track_drop() {
  # shellcheck disable=SC2086 # paths without spaces (awl_cg_place): split on the spaces between them
  [ -z "${awl_cg_dirs-}" ] || rmdir $awl_cg_dirs 2>/dev/null
  return 0
}

# awl_env_list: the /proc/PID/environ paths, one per line, of the processes this user may read whose environment
# carries AWAITLESS_JOB_ID=AWL_JOB_ID (one grep over all of them).
awl_env_list() {
  grep -l -s -a -z -x -F "AWAITLESS_JOB_ID=$AWL_JOB_ID" /proc/[0-9]*/environ 2>/dev/null
}

# awl_job_procs: sets awl_procs to the pids of the job's live processes (space-separated, each once), awl_procs_n to
# their number, awl_procs_out to those outside the command's process group (they need a signal of their own) and
# awl_procs_grp to 1 when some are in it (only then is the group signalled: an empty group's number may be reused).
# Reads candidate lines on stdin: /proc/PID/environ paths (awl_env_list: carrying the job's ID) and /proc/PID/stat
# paths (awl_session_list: the command's session, which holds its group; checked again here), or none (</dev/null);
# adds the members of awl_cg_track. Zombies and awl_exclude's own are left out.
awl_job_procs() {
  awl_procs='' awl_procs_n=0 awl_procs_out='' awl_procs_grp=''
  while read -r awl_c; do
    case $awl_c in
    */stat) awl_c=${awl_c#/proc/} && awl_proc_add "${awl_c%/stat}" session ;;
    *) awl_c=${awl_c#/proc/} && awl_proc_add "${awl_c%/environ}" ;;
    esac
  done
  if [ -n "$awl_cg_track" ]; then
    { while read -r awl_c; do awl_proc_add "$awl_c"; done <"$awl_cg_track/cgroup.procs"; } 2>/dev/null
  fi
  return 0
}

# awl_session_list: the /proc/PID/stat paths, one per line, of the processes whose session (field 6) is the command's
# (pgid: the command leads its own session and group): one grep over all of them. A name in field 2 can fake a
# match, so awl_proc_add checks each again.
awl_session_list() {
  [ -n "$pgid" ] || return 0
  grep -l -s -E "\) . -?[0-9]+ -?[0-9]+ $pgid " /proc/[0-9]*/stat 2>/dev/null
}

# awl_proc_add PID [session]: adds PID to awl_procs unless it is no job process of ours (see awl_job_procs); with
# `session`, only when it is in the command's session.
awl_proc_add() {
  case $1 in '' | *[!0-9]* | 0 | 1) return 0 ;; esac
  case " $awl_procs $awl_exclude " in *" $1 "*) return 0 ;; esac
  awl_proc_stat "$1" || return 0
  case $awl_st in Z | X) return 0 ;; esac
  [ -z "${2-}" ] || [ "$awl_sid" = "$pgid" ] || return 0
  if [ "$1" != "${pid-}" ]; then
    case " $awl_exclude " in *" $awl_ppid "*) return 0 ;; esac
  fi
  awl_procs="$awl_procs $1"
  awl_procs_n=$((awl_procs_n + 1))
  if [ -n "$pgid" ] && [ "$awl_pg" = "$pgid" ]; then
    awl_procs_grp=1
  elif [ "$1" != "${pid-}" ]; then
    # (a command without a group of its own is signalled as the group is: not here)
    awl_procs_out="$awl_procs_out $1"
  fi
}

# awl_job_scan FILE: awl_job_procs: the job's cgroup; without one, the processes carrying the job's ID and those of
# the command's session (FILE: scratch for grep's lists, so that no command substitution runs; see awl_monitor on
# bash's traps).
awl_job_scan() {
  if [ -n "$awl_cg_track" ]; then
    awl_job_procs </dev/null
    return 0
  fi
  { awl_env_list; awl_session_list; } >"$1" 2>/dev/null
  { awl_job_procs <"$1"; } 2>/dev/null || awl_job_procs </dev/null
}

# awl_signal_procs SIG [out]: SIG to each of awl_procs (or, with `out`, to those outside the command's group).
awl_signal_procs() {
  if [ "${2-}" = out ]; then
    for awl_x in $awl_procs_out; do kill -"$1" "$awl_x" 2>/dev/null; done
  else
    for awl_x in $awl_procs; do kill -"$1" "$awl_x" 2>/dev/null; done
  fi
  return 0
}

# awl_kill_all: KILL to every process of the job: the cgroup at once where the kernel can (cgroup.kill), then each.
awl_kill_all() {
  [ -z "$awl_cg_track" ] || [ -n "$awl_cg_inherited" ] || [ ! -e "$awl_cg_track/cgroup.kill" ] ||
    { echo 1 >"$awl_cg_track/cgroup.kill"; } 2>/dev/null
  [ -z "$awl_procs_grp" ] || kill -KILL -"$pgid" 2>/dev/null
  awl_signal_procs KILL
}

# awl_proc_words PID: prints `PID COMMAND` (its arguments with spaces between them, or [name] when it has none),
# cut to 200 bytes.
awl_proc_words() {
  awl_w=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | head -c 200)
  if [ -z "$awl_w" ]; then
    awl_w=''
    { read -r awl_l <"/proc/$1/stat"; } 2>/dev/null && awl_w=${awl_l#*\(} && awl_w="[${awl_w%)*}]"
  fi
  printf '%s %s\n' "$1" "${awl_w% }"
}

# awl_procs_list: prints awl_proc_words for the first 20 of awl_procs.
awl_procs_list() {
  awl_i=0
  for awl_x in $awl_procs; do
    [ "$awl_i" -lt 20 ] || break
    awl_proc_words "$awl_x"
    awl_i=$((awl_i + 1))
  done
}

# awl_nap_short: sleep a tenth of a second (a whole one where sleep takes no fractions).
awl_nap_short() { sleep 0.1 2>/dev/null || sleep 1; }

# awl_job_stop GRACE TERMED FILE: stops the job's processes awl_job_scan found last (awl_procs): TERM (the command's
# group as one, the rest each; none when TERMED is 1: they had their one TERM already), then up to GRACE seconds for
# them to end, then KILL, then up to 2 s for them to be gone, KILLing whatever appears meanwhile. FILE is
# awl_job_scan's scratch.
awl_job_stop() {
  [ "$awl_procs_n" -gt 0 ] || return 0
  if [ "$2" != 1 ]; then
    [ -z "$awl_procs_grp" ] || kill -TERM -"$pgid" 2>/dev/null
    awl_signal_procs TERM out
  fi
  awl_now
  awl_js_until=$((awl_t + $1))
  # a first look soon after the TERM (most processes end at once), then every tenth of a second
  awl_js_nap=0.02
  while [ "$awl_t" -lt "$awl_js_until" ]; do
    sleep "$awl_js_nap" 2>/dev/null || sleep 1
    awl_js_nap=0.1
    awl_job_scan "$3"
    [ "$awl_procs_n" -gt 0 ] || return 0
    awl_now
  done
  awl_log "grace period over: sending KILL to the job's processes:$awl_procs"
  awl_js_until=$((awl_t + 2))
  while [ "$awl_procs_n" -gt 0 ] && [ "$awl_t" -le "$awl_js_until" ]; do
    awl_kill_all
    awl_nap_short
    awl_job_scan "$3"
    awl_now
  done
  [ "$awl_procs_n" -eq 0 ] || awl_log "still alive after KILL:$awl_procs"
}

# awl_ticks PID: sets awl_cu and awl_cs_ to fields 16 and 17 of /proc/PID/stat: the CPU time (user, system, in clock
# ticks) of PID's children it has waited for, and theirs ('' without /proc).
awl_ticks() {
  awl_cu='' awl_csy=''
  { read -r awl_l <"/proc/$1/stat"; } 2>/dev/null || return 1
  # shellcheck disable=SC2086 # numbers and a state letter after the name
  set -- ${awl_l##*") "}
  [ $# -ge 15 ] || return 1
  awl_cu=${14} awl_csy=${15}
}

# awl_usage RU0 RS0 RU1 RS1: sets what the job cost: awl_cpu_u and awl_cpu_s (microseconds), awl_rss (peak bytes),
# awl_oom (OOM kills) and awl_res_src (cgroup | rusage; '' when nothing is known). From the job's cgroup when it has
# one; else the CPU time of the command's reaped tree: the wrapper's children's ticks after the command (RU1, RS1)
# less before it (RU0, RS0).
awl_usage() {
  awl_cpu_u='' awl_cpu_s='' awl_rss='' awl_oom='' awl_res_src=''
  if [ -n "$awl_cg_cpu" ] && [ -n "$awl_cg_track" ]; then
    if [ -r "$awl_cg_cpu/cpu.stat" ]; then
      { while read -r awl_k awl_v; do
        case $awl_k in
        user_usec) awl_cpu_u=$awl_v ;;
        system_usec) awl_cpu_s=$awl_v ;;
        esac
      done <"$awl_cg_cpu/cpu.stat"; } 2>/dev/null
    elif [ -r "$awl_cg_cpu/cpuacct.stat" ]; then
      awl_hz
      { while read -r awl_k awl_v; do
        case $awl_k in
        user) awl_cpu_u=$((awl_v * 1000000 / awl_hz_v)) ;;
        system) awl_cpu_s=$((awl_v * 1000000 / awl_hz_v)) ;;
        esac
      done <"$awl_cg_cpu/cpuacct.stat"; } 2>/dev/null
    fi
    [ -z "$awl_cpu_u$awl_cpu_s" ] || awl_res_src=cgroup
  fi
  if [ -n "$awl_cg_mem" ] && [ -n "$awl_cg_track" ]; then
    for awl_f in memory.peak memory.max_usage_in_bytes; do
      [ -r "$awl_cg_mem/$awl_f" ] || continue
      { read -r awl_rss <"$awl_cg_mem/$awl_f"; } 2>/dev/null
      break
    done
    case $awl_rss in *[!0-9]*) awl_rss='' ;; esac
    for awl_f in memory.events memory.oom_control; do
      [ -r "$awl_cg_mem/$awl_f" ] || continue
      { while read -r awl_k awl_v; do [ "$awl_k" != oom_kill ] || awl_oom=$awl_v; done <"$awl_cg_mem/$awl_f"; } 2>/dev/null
      break
    done
    [ -z "$awl_rss" ] || awl_res_src=cgroup
  fi
  [ -z "$awl_res_src" ] || return 0
  case $1$2$3$4 in '' | *[!0-9]*) return 0 ;; esac
  awl_cpu_u=0 awl_cpu_s=0 awl_res_src=rusage
  [ "$3" != "$1" ] || [ "$4" != "$2" ] || return 0
  awl_hz
  awl_cpu_u=$((($3 - $1) * 1000000 / awl_hz_v))
  awl_cpu_s=$((($4 - $2) * 1000000 / awl_hz_v))
}

# awl_hz: sets awl_hz_v to the kernel's clock ticks per second (getconf CLK_TCK; 100 when it cannot say).
awl_hz() {
  [ -z "${awl_hz_v-}" ] || return 0
  awl_hz_v=$(getconf CLK_TCK 2>/dev/null)
  case $awl_hz_v in '' | 0 | *[!0-9]*) awl_hz_v=100 ;; esac
}
