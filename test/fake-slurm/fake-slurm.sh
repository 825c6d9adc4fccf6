#!/bin/sh
# Fake Slurm clients for fast tests without root or a cluster: `fake-slurm.sh PROGRAM ARGS...` answers as sbatch,
# squeue, sacct, scontrol or scancel would, in the formats src/backends/slurm/slurm-queries.ts parses. sbatch runs
# the batch script at once on this machine, in the background (a runner waits for it and records how it ended);
# state lives under $AWL_FAKE_SLURM (one directory per job: script, name, comment, state, times, exit, pids).
# Arrays (`#SBATCH --array=IDS[%N]`): one directory per task `ID_T`, at most N RUNNING at once, `--dependency=afterany:J`
# honoured for them, `%a` in --output/--error, --jobs=ID meaning every task; `scontrol show config` prints
# MaxArraySize from $AWL_FAKE_SLURM/max_array_size (default 1001); every sbatch call is counted in sbatch_calls.
set -u
S=${AWL_FAKE_SLURM:?set AWL_FAKE_SLURM to the fake cluster state directory}
prog=$1
shift
mkdir -p "$S/jobs"

stamp() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }
field() { if [ -s "$1" ]; then cat "$1"; else printf '%s' "$2"; fi; }
# put FILE TEXT: written whole (temp file, then rename), so a reader never sees half of it
put() { printf '%s\n' "$2" >"$1.tmp" && mv -f "$1.tmp" "$1"; }

# The IDs of --jobs=A,B (each once; an array's ID stands for its tasks), else every job and task.
ids() {
  if [ -n "$1" ]; then
    printf '%s\n' "$1" | tr ',' '\n' | awk 'NF && !seen[$0]++' | while read -r i; do
      if [ -s "$S/jobs/$i/tasks" ]; then sed "s/^/${i}_/" "$S/jobs/$i/tasks"; else echo "$i"; fi
    done
  else
    for d in "$S"/jobs/*; do [ ! -d "$d" ] || [ -s "$d/tasks" ] || echo "${d##*/}"; done | sort -n
  fi
}

# Expands Slurm --array task IDs (`0-3,7`) one a line.
array_ids() {
  printf '%s\n' "$1" | tr ',' '\n' | while IFS=- read -r lo hi; do
    i=$lo
    while [ "$i" -le "${hi:-$lo}" ]; do
      echo "$i"
      i=$((i + 1))
    done
  done
}

# True when every task of array job $1 has ended.
array_done() {
  awl_tasks=$(cat "$S/jobs/$1/tasks")
  for t in $awl_tasks; do
    case $(field "$S/jobs/${1}_$t/state" PENDING) in PENDING | RUNNING) return 1 ;; esac
  done
}

case $prog in
sbatch)
  until mkdir "$S/lock" 2>/dev/null; do sleep 0.01; done
  id=$(($(field "$S/last" 100) + 1))
  put "$S/last" "$id"
  rmdir "$S/lock"
  d=$S/jobs/$id
  mkdir -p "$d"
  cat >"$d/script"
  echo "$id" >>"$S/sbatch_calls"
  for key in job-name comment chdir output error array dependency; do
    sed -n "s/^#SBATCH --$key=//p" "$d/script" | tail -n 1 >"$d/$key"
  done
  date +%s >"$d/submit"
  if [ -s "$d/array" ]; then
    spec=$(cat "$d/array")
    case $spec in *%*) put "$d/throttle" "${spec#*%}" ;; *) put "$d/throttle" 0 ;; esac
    sed -n 's/^afterany://p' "$d/dependency" >"$d/after"
    array_ids "${spec%%%*}" >"$d/tasks"
    tasks=$(cat "$d/tasks")
    for t in $tasks; do
      td=$S/jobs/${id}_$t
      mkdir -p "$td"
      cp "$d/script" "$d/job-name" "$d/comment" "$d/chdir" "$d/submit" "$td/"
      sed "s/%a/$t/g" "$d/output" >"$td/output"
      sed "s/%a/$t/g" "$d/error" >"$td/error"
      echo "$id" >"$td/array_job"
      echo "$t" >"$td/array_task"
      put "$td/state" PENDING
      sh "$0" runner "${id}_$t" </dev/null >/dev/null 2>&1 &
      echo "$!" >"$td/runner_pid"
    done
    echo "$id"
    exit 0
  fi
  put "$d/state" PENDING
  # the runner outlives this call: no terminal, no pipe back to the caller
  sh "$0" runner "$id" </dev/null >/dev/null 2>&1 &
  echo "$!" >"$d/runner_pid"
  echo "$id"
  ;;
runner)
  # one run per pass: a requeue (scontrol requeuehold) sends the job back to PENDING and, once released, again
  d=$S/jobs/$1
  if [ -s "$d/array_job" ]; then
    # an array task: after its dependency, then a slot under the array's %N (taken under the array's lock)
    p=$(cat "$d/array_job")
    pd=$S/jobs/$p
    SLURM_ARRAY_TASK_ID=$(cat "$d/array_task")
    export SLURM_ARRAY_JOB_ID="$p" SLURM_ARRAY_TASK_ID
    after=$(field "$pd/after" '')
    while [ -n "$after" ] && [ ! -e "$d/cancelled" ] && ! array_done "$after"; do
      put "$d/reason" Dependency
      sleep 0.1
    done
    n=$(field "$pd/throttle" 0)
    while [ "$n" -gt 0 ] && [ ! -e "$d/cancelled" ]; do
      until mkdir "$pd/lock" 2>/dev/null; do sleep 0.01; done
      running=0
      tasks=$(cat "$pd/tasks")
      for t in $tasks; do
        [ "$(field "$S/jobs/${p}_$t/state" '')" != RUNNING ] || running=$((running + 1))
      done
      if [ "$running" -lt "$n" ]; then
        put "$d/state" RUNNING
        rmdir "$pd/lock"
        break
      fi
      rmdir "$pd/lock"
      put "$d/reason" JobArrayTaskLimit
      sleep 0.1
    done
  fi
  while :; do
    while [ -e "$d/hold" ] && [ ! -e "$d/cancelled" ]; do sleep 0.1; done
    if [ -e "$d/cancelled" ]; then
      date +%s >"$d/end"
      put "$d/exit" 0:0
      put "$d/state" CANCELLED
      exit 0
    fi
    cd "$(field "$d/chdir" /)" || exit 1
    date +%s >"$d/start"
    rm -f "$d/reason"
    put "$d/state" RUNNING
    # what Slurm does between allocating the job and starting its batch script (prolog, node set-up)
    [ ! -s "$S/prolog_seconds" ] || sleep "$(cat "$S/prolog_seconds")"
    export SLURM_JOB_ID="$1"
    sh "$d/script" >>"$(field "$d/output" /dev/null)" 2>>"$(field "$d/error" /dev/null)" </dev/null &
    echo "$!" >"$d/pid"
    wait "$!"
    rc=$?
    if [ -e "$d/requeue" ]; then
      rm -f "$d/requeue" "$d/pid" "$d/start"
      put "$d/state" PENDING
      continue
    fi
    break
  done
  date +%s >"$d/end"
  if [ -e "$d/cancelled" ]; then
    put "$d/exit" "0:15"
    put "$d/state" CANCELLED
  elif [ "$rc" -gt 128 ]; then
    put "$d/exit" "0:$((rc - 128))"
    put "$d/state" FAILED
  elif [ "$rc" -eq 0 ]; then
    put "$d/exit" 0:0
    put "$d/state" COMPLETED
  else
    put "$d/exit" "$rc:0"
    put "$d/state" FAILED
  fi
  ;;
squeue)
  jobs='' name='' all=''
  for a in "$@"; do
    case $a in --jobs=*) jobs=${a#--jobs=} ;; --name=*) name=${a#--name=} ;; --states=all) all=1 ;; esac
  done
  for id in $(ids "$jobs"); do
    d=$S/jobs/$id
    [ -d "$d" ] || continue
    state=$(field "$d/state" UNKNOWN)
    [ -n "$all" ] || case $state in PENDING | RUNNING) ;; *) continue ;; esac
    [ -z "$name" ] || [ "$(field "$d/job-name" '')" = "$name" ] || continue
    printf '%s|%s|%s|%s|%s\n' "$id" "$state" "$(field "$d/reason" None)" "$(field "$d/job-name" '')" \
      "$(field "$d/comment" '')"
  done
  ;;
sacct)
  jobs=''
  for a in "$@"; do case $a in --jobs=*) jobs=${a#--jobs=} ;; esac; done
  for id in $(ids "$jobs"); do
    d=$S/jobs/$id
    [ -d "$d" ] || continue
    state=$(field "$d/state" UNKNOWN)
    start=Unknown end=Unknown
    [ ! -s "$d/start" ] || start=$(stamp "$(cat "$d/start")")
    [ ! -s "$d/end" ] || end=$(stamp "$(cat "$d/end")")
    [ "$state" != CANCELLED ] || state="CANCELLED by $(id -u)"
    printf '%s|%s|%s|None|%s|%s|%s|%s|%s\n' "$id" "$state" "$(field "$d/exit" 0:0)" \
      "$(stamp "$(cat "$d/submit")")" "$start" "$end" "$(field "$d/job-name" '')" "$(field "$d/comment" '')"
  done
  ;;
scontrol)
  case $* in
  "show config")
    printf 'MaxArraySize            = %s\nMaxJobCount             = 10000\n' "$(field "$S/max_array_size" 1001)"
    exit 0
    ;;
  "requeuehold "*)
    # back to PENDING, held: the batch shell and the command's group are killed, as Slurm's requeue does
    d=$S/jobs/$2
    : >"$d/hold"
    put "$d/reason" JobHeldUser
    if [ -s "$d/pid" ]; then
      : >"$d/requeue"
      rec=$(field "$d/chdir" /)/started
      pgid=$(sed -n 's/^pgid=//p' "$rec" 2>/dev/null)
      mon=$(sed -n 's/^monitor_pid=//p' "$rec" 2>/dev/null)
      [ -z "$pgid" ] || kill -KILL "-$pgid" 2>/dev/null
      [ -z "$mon" ] || kill -KILL "$mon" 2>/dev/null
      kill -KILL "$(cat "$d/pid")" 2>/dev/null
    fi
    exit 0
    ;;
  "release "*)
    rm -f "$S/jobs/$2/hold"
    exit 0
    ;;
  esac
  id=''
  for a in "$@"; do id=$a; done
  d=$S/jobs/$id
  if [ ! -d "$d" ]; then
    echo "slurm_load_jobs error: Invalid job id specified" >&2
    exit 1
  fi
  printf 'JobId=%s JobName=%s JobState=%s Reason=None ExitCode=%s\n' "$id" "$(field "$d/job-name" '')" \
    "$(field "$d/state" UNKNOWN)" "$(field "$d/exit" 0:0)"
  ;;
scancel)
  for id in $(ids "$(printf '%s,' "$@")"); do
    d=$S/jobs/$id
    [ -d "$d" ] || continue
    case $(field "$d/state" '') in
    PENDING | RUNNING)
      : >"$d/cancelled"
      # as Slurm does: TERM (after CONT) to the batch shell only
      if [ -s "$d/pid" ]; then kill -CONT "$(cat "$d/pid")" 2>/dev/null; kill -TERM "$(cat "$d/pid")" 2>/dev/null; fi
      ;;
    esac
  done
  ;;
*)
  echo "fake-slurm.sh: unknown program '$prog'" >&2
  exit 2
  ;;
esac
