// A host's queue directory (<remote_job_dir>/queues, wrapper.sh "Queue admission") seen from the client: where it
// is, and its live admitted and waiting jobs read in one round trip (liveness judged on the host, as wrappers do).
import type { QueueSnapshot } from "../../core/backend.ts";
import { AwaitlessError } from "../../core/errors.ts";
import { QUEUE_SNAPSHOT } from "../../wrapper/host-scripts.ts";
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

/** Parses queue-snapshot.sh's lines (its header documents them); waiting jobs in ticket (FIFO) order. */
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
  const r = await host.run(QUEUE_SNAPSHOT, ["-r", host.settings.remoteJobDir]);
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
