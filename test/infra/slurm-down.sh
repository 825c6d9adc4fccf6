#!/usr/bin/env bash
# slurm-down.sh - stop the test cluster that slurm-up.sh started, only by the PIDs it recorded
# in $AWAITLESS_SLURM_DIR/<name>.pid ("PID COMM"); a PID is signalled only while
# /proc/PID/comm still equals COMM (never by name, no PID-reuse accidents).
# Order: cancel jobs -> slurmd, slurmd2 -> slurmctld -> slurmdbd -> mariadbd -> munged.
# Packages, configs, users, the accounting DB and slurmctld state are kept, so the next
# slurm-up.sh takes seconds.
#   AWAITLESS_SLURM_DIR=${TMPDIR:-/tmp}/awaitless-slurm   where slurm-up.sh recorded its PIDs
#   AWAITLESS_SLURM_KEEP_JOBS=1                           do not scancel queued/running jobs first
set -uo pipefail
DIR=${AWAITLESS_SLURM_DIR:-${TMPDIR:-/tmp}/awaitless-slurm}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
log() { printf '[slurm-down %s] %s\n' "$(date +%T)" "$*"; }

alive() { # alive NAME: print the recorded PID if it is still that daemon
  local f=$DIR/$1.pid pid comm
  [ -s "$f" ] || return 1
  read -r pid comm <"$f"
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] && echo "$pid"
}
stop() { # stop NAME TIMEOUT_S: SIGTERM, wait for the PID to vanish, then SIGKILL
  local name=$1 tmo=$2 pid deadline
  if ! pid=$(alive "$name"); then
    [ ! -e "$DIR/$name.pid" ] || log "$name: not running (stale pid file removed)"
    rm -f "$DIR/$name.pid"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null
  deadline=$(($(date +%s) + tmo))
  while [ -d "/proc/$pid" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.25; done
  if [ -d "/proc/$pid" ]; then
    log "$name (pid $pid) ignored SIGTERM for ${tmo}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$DIR/$name.pid"
  log "stopped $name (pid $pid)"
}

[ -d "$DIR" ] || { log "no state directory $DIR: nothing to stop"; exit 0; }

# Job processes live in slurmstepd, which outlives slurmd: cancel them while the controller
# is still up so nothing keeps running after we return.
if [ -z "${AWAITLESS_SLURM_KEEP_JOBS:-}" ] && alive slurmctld >/dev/null &&
  timeout 10 scontrol ping 2>/dev/null | grep -q UP; then
  jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086 # one word per job id
    scancel $jobs 2>/dev/null || true
    deadline=$(($(date +%s) + 30))
    while [ -n "$(squeue -h -t R,CG -o %i 2>/dev/null)" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
  fi
fi

if alive slurmd >/dev/null || alive slurmd2 >/dev/null; then
  stop slurmd 30
  stop slurmd2 30
  # slurmd leaves its empty cgroup v1 trees behind; rmdir only removes cgroups without tasks
  for d in /sys/fs/cgroup/*/slurm_*; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
else
  stop slurmd 30
  stop slurmd2 30
fi
stop slurmctld 30
stop slurmdbd 30
stop mariadbd 120 # InnoDB shutdown can take a moment
stop munged 10
log "done (start again with: bash $(cd "$(dirname "$0")" && pwd)/slurm-up.sh)"
