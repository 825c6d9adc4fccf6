// A host's queue directory (<remote_job_dir>/queues, wrapper.sh "Queue admission") seen from the client: where it
// is, and its live admitted and waiting jobs read in one round trip (liveness judged on the host, as wrappers do).
import type { QueueSnapshot } from "../../core/backend.ts";
import { AwaitlessError } from "../../core/errors.ts";
import { ROOT } from "./remote-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

/** The queue directory of a prepared remote root (absolute). */
export function queueDirOf(root: string): string {
  return `${root}/queues`;
}

/** The queue directory a job's wrapper used: its remote dir is <root>/jobs/<job_id>. */
export function queueDirOfJob(remoteDir: string): string {
  const i = remoteDir.lastIndexOf("/jobs/");
  return queueDirOf(i < 0 ? remoteDir : remoteDir.slice(0, i));
}

/**
 * Args: remote_job_dir. One line per live entry: `R JOB_ID QUEUE` (admitted) and `W TICKET.JOB_ID QUEUE` (waiting;
 * QUEUE empty for resource locks only). An entry is live while its wrapper is (pid, process start time, same boot
 * ID) or, once admitted, while its command's process group is; dead ones are left for the wrappers to remove.
 */
export const QUEUE_SNAPSHOT = `${ROOT}q=$r/queues
b=''
[ -r /proc/sys/kernel/random/boot_id ] && read -r b </proc/sys/kernel/random/boot_id
pid_alive() {
  [ -n "$1" ] || return 1
  if [ -r /proc/self/stat ]; then
    { read -r x <"/proc/$1/stat"; } 2>/dev/null || return 1
    ps=$2
    set -- \${x##*") "}
    [ "$1" != Z ] && [ "$1" != X ] || return 1
    [ -n "$ps" ] && [ $# -ge 20 ] || return 0
    shift 19
    [ "$1" = "$ps" ]
    return
  fi
  kill -0 "$1" 2>/dev/null
}
entry() {
  eq='' ew='' es='' eb='' ep='' eg=''
  { while IFS='=' read -r k v; do
    case $k in
    queue) eq=$v ;;
    wrapper_pid) ew=$v ;;
    proc_start) es=$v ;;
    boot_id) eb=$v ;;
    pid) ep=$v ;;
    pgid) eg=$v ;;
    esac
  done <"$1"; } 2>/dev/null || return 1
  [ -n "$ew" ]
}
live() {
  [ -z "$eb" ] || [ -z "$b" ] || [ "$eb" = "$b" ] || return 1
  pid_alive "$ew" "$es" && return 0
  if [ -n "$eg" ]; then kill -0 -"$eg" 2>/dev/null
  elif [ -n "$ep" ]; then kill -0 "$ep" 2>/dev/null
  else return 1
  fi
}
for f in "$q"/running/*; do
  [ -e "$f" ] && entry "$f" && live && printf 'R %s %s\\n' "\${f##*/}" "$eq"
done
for f in "$q"/waiting/*; do
  [ -e "$f" ] && entry "$f" && live && printf 'W %s %s\\n' "\${f##*/}" "$eq"
done
exit 0
`;

/** Parses QUEUE_SNAPSHOT's lines; waiting jobs in ticket (FIFO) order. */
export function parseQueueSnapshot(text: string): QueueSnapshot {
  const snap: QueueSnapshot = { running: [], waiting: [] };
  for (const line of text.split("\n")) {
    const m = /^([RW]) (\S+) ?(\S*)$/.exec(line);
    if (!m) continue;
    const queue = m[3] === "" ? null : m[3]!;
    if (m[1] === "R") {
      snap.running.push({ job_id: m[2]!, queue });
      continue;
    }
    const name = m[2]!;
    const dot = name.indexOf(".");
    const ticket = Number(name.slice(0, dot));
    if (dot > 0 && Number.isSafeInteger(ticket))
      snap.waiting.push({ job_id: name.slice(dot + 1), queue, ticket });
  }
  snap.waiting.sort((a, b) => a.ticket - b.ticket);
  return snap;
}

/** The host's queue directory now (one round trip). */
export async function readRemoteQueueSnapshot(host: SshHost): Promise<QueueSnapshot> {
  const r = await host.run(QUEUE_SNAPSHOT, [host.settings.remoteJobDir]);
  if (r.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `could not list the queues on ${host.name} (exit ${r.code}): ${r.stderr.toString().trim().slice(0, 500)}`,
      "check that the host has a POSIX sh and that remote_job_dir is readable",
      { host: host.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
    );
  }
  return parseQueueSnapshot(r.stdout.toString());
}
