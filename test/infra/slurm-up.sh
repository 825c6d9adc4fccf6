#!/usr/bin/env bash
# slurm-up.sh - bring up a real single-machine Slurm test cluster on Debian 12 (slurm-wlm 22.05)
# without systemd: munge + MariaDB + slurmdbd + slurmctld + slurmd, all on 127.0.0.1.
# Run as root (CI: `bash test/infra/slurm-up.sh`); stop it with test/infra/slurm-down.sh.
#
# Idempotent: Debian packages are installed only when missing; configs are rewritten only
# when their content changes (then the daemons we started are restarted); a daemon is started
# only when the one recorded in $AWAITLESS_SLURM_DIR/<name>.pid ("PID COMM") is not alive.
# Daemons run in the foreground under setsid with stdin=/dev/null and output to
# $AWAITLESS_SLURM_DIR/<name>.out, so the script returns promptly under CI pipes.
# Test users (login shell /bin/dash, home under /home) are created when missing; they can
# submit with no sacctmgr setup because AccountingStorageEnforce is unset.
#
# Environment (all optional):
#   AWAITLESS_SLURM_DIR=${TMPDIR:-/tmp}/awaitless-slurm   pid files, daemon output, cluster.env
#   AWAITLESS_SLURM_CLUSTER=awaitless                      ClusterName
#   AWAITLESS_SLURM_USERS=awl-dash                         non-root submitters to create
#   AWAITLESS_SLURM_NODE2=awl-node2                        NodeName of the second slurmd
#   AWAITLESS_SLURM_CGROUP=auto                            auto|yes|no (auto: probe cgroup v1 memory)
#   AWAITLESS_SLURM_DB_PASS=awaitless-slurmdb              MariaDB password of the 'slurm' user
#   AWAITLESS_SLURM_NO_INSTALL=1                           never call apt-get
# shellcheck disable=SC2015 # `put_file … && CHANGED=1 || true`: the `|| true` is meant for both
set -Eeuo pipefail

DIR=${AWAITLESS_SLURM_DIR:-${TMPDIR:-/tmp}/awaitless-slurm}
CLUSTER=${AWAITLESS_SLURM_CLUSTER:-awaitless}
USERS=${AWAITLESS_SLURM_USERS:-awl-dash}
NODE2=${AWAITLESS_SLURM_NODE2:-awl-node2}
CGROUP_MODE=${AWAITLESS_SLURM_CGROUP:-auto}
DB_PASS=${AWAITLESS_SLURM_DB_PASS:-awaitless-slurmdb}
PKGS=(munge mariadb-server slurmdbd slurmctld slurmd slurm-client dash)
export DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
HERE=$(cd "$(dirname "$0")" && pwd)

log() { printf '[slurm-up %s] %s\n' "$(date +%T)" "$*"; }
die() { log "ERROR: $*"; exit 1; }
trap 'log "failed at line $LINENO (exit $?); daemon output is in $DIR/*.out and /var/log/slurm/"' ERR
[ "$(id -u)" = 0 ] || die "must run as root (try: sudo bash $0)"
mkdir -p "$DIR"
T0=$(date +%s)

# ---------------------------------------------------------------- 1. packages
missing=()
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ -z "${AWAITLESS_SLURM_NO_INSTALL:-}" ] || die "missing packages: ${missing[*]} (unset AWAITLESS_SLURM_NO_INSTALL to install them)"
  log "installing: ${missing[*]}"
  # No init system: keep postinst's invoke-rc.d from starting daemons (we start them below).
  made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  apt-get -q -o DPkg::Lock::Timeout=300 update || log "WARNING: apt-get update reported errors; trying the install anyway"
  rc=0
  apt-get -q -y -o DPkg::Lock::Timeout=300 --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    install "${PKGS[@]}" </dev/null || rc=$?
  [ "$made_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d
  [ "$rc" = 0 ] || die "apt-get install failed (rc $rc)"
fi

# ---------------------------------------------------------------- helpers
running() { # running NAME: the recorded PID is alive and still has the recorded comm
  local f=$DIR/$1.pid pid comm
  [ -s "$f" ] || return 1
  read -r pid comm <"$f"
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ]
}
start_daemon() { # start_daemon NAME COMM CMD... (CMD stays in the foreground)
  local name=$1 comm=$2; shift 2
  if running "$name"; then log "$name already running (pid $(cut -d' ' -f1 "$DIR/$name.pid"))"; return 0; fi
  # setsid execs in place (a background job is not a group leader), so $! is the daemon
  setsid "$@" </dev/null >>"$DIR/$name.out" 2>&1 &
  echo "$! $comm" >"$DIR/$name.pid"
  log "started $name (pid $!)"
}
wait_for() { # wait_for SECONDS NAME CMD...: poll CMD; fail fast if daemon NAME died
  local secs=$1 name=$2 deadline; shift 2
  deadline=$(($(date +%s) + secs))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ -e "$DIR/$name.pid" ] && ! running "$name"; then
      tail -n 20 "$DIR/$name.out" >&2 || true
      die "$name exited during startup (see $DIR/$name.out)"
    fi
    sleep 0.25
  done
  die "timed out after ${secs}s waiting for $name (see $DIR/$name.out)"
}
put_file() { # put_file PATH MODE OWNER:GROUP < content; returns 0 only if the file changed
  local tmp; tmp=$(mktemp)
  cat >"$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; chmod "$2" "$1"; chown "$3" "$1"; return 1; fi
  install -m "$2" -o "${3%%:*}" -g "${3##*:}" "$tmp" "$1"; rm -f "$tmp"
  log "wrote $1"
}

# ---------------------------------------------------------------- 2. users, dirs, munge key
id slurm >/dev/null 2>&1 || adduser --quiet --system --group --no-create-home --home /nonexistent slurm
id munge >/dev/null 2>&1 || adduser --quiet --system --group --no-create-home --home /nonexistent munge
for u in $USERS; do
  id "$u" >/dev/null 2>&1 || { useradd --create-home --shell /bin/dash "$u"; log "created user $u"; }
done
install -d -o munge -g munge -m 0755 /run/munge
install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
install -d -o munge -g munge -m 0711 /var/lib/munge
install -d -o mysql -g mysql -m 0755 /run/mysqld
install -d -o slurm -g slurm -m 0755 /var/lib/slurm /var/lib/slurm/slurmctld /var/log/slurm /run/slurm
install -d -o root -g root -m 0755 /var/lib/slurm/slurmd
if [ ! -s /etc/munge/munge.key ]; then
  setpriv --reuid=munge --regid=munge --init-groups mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key

# ---------------------------------------------------------------- 3. configs
NODE=$(hostname -s)
HW=$(slurmd -C 2>/dev/null | head -n1 || true)   # hardware as slurmd sees it; needs no config
hw() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$HW"; }
CPUS=$(hw CPUs); CPUS=${CPUS:-$(nproc)}
SOCK=$(hw SocketsPerBoard); CORES=$(hw CoresPerSocket); THR=$(hw ThreadsPerCore)
MEM=$(hw RealMemory); MEM=${MEM:-$(($(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024))}
MEM=$((MEM * 90 / 100))   # claiming more than exists drains the node ("Low RealMemory")
DEFMEM=$((MEM / CPUS))    # jobs without --mem get an equal share per CPU
TOPO=""
if [ -n "$SOCK" ] && [ -n "$CORES" ] && [ -n "$THR" ]; then
  TOPO="Sockets=$SOCK CoresPerSocket=$CORES ThreadsPerCore=$THR"
fi
# cgroup plugins when the cgroup v1 memory controller is writable (gives OUT_OF_MEMORY);
# otherwise polling-based memory enforcement (OOM then shows as FAILED 0:9).
if [ "$CGROUP_MODE" = auto ]; then
  CGROUP_MODE=no
  if [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/awl_probe.$$" 2>/dev/null; then
    rmdir "/sys/fs/cgroup/memory/awl_probe.$$"; CGROUP_MODE=yes
  fi
fi
if [ "$CGROUP_MODE" = yes ]; then
  PLUGINS="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
JobAcctGatherType=jobacct_gather/cgroup"
else
  PLUGINS="ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill"
fi

CONF_CHANGED=0; DBD_CHANGED=0; DB_CHANGED=0
put_file /etc/slurm/slurm.conf 0644 root:root <<EOF && CONF_CHANGED=1 || true
# generated by awaitless test/infra/slurm-up.sh: single-machine test cluster
ClusterName=$CLUSTER
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/lib/slurm/slurmctld
# two slurmd on this machine: %n (the NodeName) keeps their spool, pid and log apart
SlurmdSpoolDir=/var/lib/slurm/slurmd/%n
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd-%n.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
$PLUGINS
JobAcctGatherFrequency=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
# sacct shows --comment only with this flag (Awaitless tags jobs with it)
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$DEFMEM
ReturnToService=2
# fast kills for tests: SIGTERM -> SIGKILL after 5 s, no grace past --time
KillWait=5
OverTimeLimit=0
InactiveLimit=0
MinJobAge=300
SlurmctldTimeout=120
SlurmdTimeout=300
MailProg=/bin/true
# preemption by partition priority; only awl-low's jobs can be preempted (requeued)
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
Licenses=awl_lic:2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS $TOPO RealMemory=$MEM State=UNKNOWN
NodeName=$NODE2 NodeHostname=$NODE NodeAddr=127.0.0.1 Port=6828 CPUs=2 RealMemory=2048 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP PreemptMode=OFF
PartitionName=awl-low Nodes=$NODE2 MaxTime=INFINITE State=UP PriorityTier=1 PreemptMode=REQUEUE DefMemPerCPU=256
PartitionName=awl-high Nodes=$NODE2 MaxTime=INFINITE State=UP PriorityTier=2 PreemptMode=OFF DefMemPerCPU=256
EOF
put_file /etc/slurm/cgroup.conf 0644 root:root <<EOF && CONF_CHANGED=1 || true
# generated by awaitless test/infra/slurm-up.sh
CgroupPlugin=autodetect
CgroupAutomount=yes
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF
put_file /etc/slurm/slurmdbd.conf 0600 slurm:slurm <<EOF && DBD_CHANGED=1 || true
# generated by awaitless test/infra/slurm-up.sh (must be 0600 and owned by SlurmUser)
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
PidFile=/run/slurm/slurmdbd.pid
LogFile=/var/log/slurm/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db
EOF
put_file /etc/mysql/mariadb.conf.d/99-slurmdbd.cnf 0644 root:root <<EOF && DB_CHANGED=1 || true
# generated by awaitless test/infra/slurm-up.sh: slurmdbd warns below these
[mysqld]
innodb_buffer_pool_size=512M
innodb_lock_wait_timeout=900
EOF

stop_recorded() { # stop_recorded NAME: a config changed under a daemon we started
  running "$1" || return 0
  local pid; read -r pid _ <"$DIR/$1.pid"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(($(date +%s) + 30))
  while [ -d "/proc/$pid" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.25; done
  [ ! -d "/proc/$pid" ] || kill -KILL "$pid" 2>/dev/null || true
  rm -f "$DIR/$1.pid"; log "stopped $1 (pid $pid) to apply a config change"
}
if [ "$CONF_CHANGED" = 1 ]; then stop_recorded slurmd; stop_recorded slurmd2; stop_recorded slurmctld; fi
if [ "$DBD_CHANGED" = 1 ] || [ "$DB_CHANGED" = 1 ]; then stop_recorded slurmdbd; fi
if [ "$DB_CHANGED" = 1 ]; then stop_recorded mariadbd; fi

# ---------------------------------------------------------------- 4. munge
if ! running munged && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "a munged not started by this script is already serving; using it"
else
  start_daemon munged munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground
  wait_for 20 munged sh -c 'munge -n | unmunge'
fi

# ---------------------------------------------------------------- 5. MariaDB
[ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db >/dev/null
if ! running mariadbd && mariadb-admin ping >/dev/null 2>&1; then
  log "a MariaDB not started by this script is already serving; using it"
else
  start_daemon mariadbd mariadbd /usr/sbin/mariadbd --user=mysql
  wait_for 60 mariadbd mariadb-admin ping
fi
mariadb <<EOF
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF

# ---------------------------------------------------------------- 6. slurmdbd, slurmctld, slurmd
start_daemon slurmdbd slurmdbd /usr/sbin/slurmdbd -D
wait_for 120 slurmdbd sacctmgr -n list cluster   # the first start creates the schema
if ! sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER"; then
  sacctmgr -i add cluster "$CLUSTER" >/dev/null
fi
start_daemon slurmctld slurmctld /usr/sbin/slurmctld -D
wait_for 60 slurmctld sh -c 'scontrol ping | grep -q UP'
ulimit -n 131072 2>/dev/null || true
ulimit -l unlimited 2>/dev/null || true
install -d -o root -g root -m 0755 "/var/lib/slurm/slurmd/$NODE" "/var/lib/slurm/slurmd/$NODE2"
start_daemon slurmd slurmd /usr/sbin/slurmd -D -N "$NODE"
start_daemon slurmd2 slurmd /usr/sbin/slurmd -D -N "$NODE2"
node_ok() { # node_ok NODE
  sinfo -h -n "$1" -N -o '%T' | grep -qE '^(idle|mixed|allocated|completing)$'
}
for n in "$NODE:slurmd" "$NODE2:slurmd2"; do
  if ! (wait_for 30 "${n#*:}" node_ok "${n%%:*}") 2>/dev/null; then
    # e.g. left DOWN/DRAINED by an earlier run (or a fault test): show why and resume it once
    sinfo -h -N -n "${n%%:*}" -o '%N %T %E' >&2 || true
    scontrol update nodename="${n%%:*}" state=resume 2>/dev/null || true
    wait_for 30 "${n#*:}" node_ok "${n%%:*}"
  fi
done

cat >"$DIR/cluster.env" <<EOF
AWAITLESS_SLURM_CLUSTER=$CLUSTER
AWAITLESS_SLURM_USERS="$USERS"
AWAITLESS_SLURM_CGROUP=$CGROUP_MODE
AWAITLESS_SLURM_NODE=$NODE
AWAITLESS_SLURM_NODE2=$NODE2
EOF
sinfo
log "cluster '$CLUSTER' is up in $(($(date +%s) - T0))s (cgroups: $CGROUP_MODE, submitters: $USERS); stop it with: bash $HERE/slurm-down.sh"
