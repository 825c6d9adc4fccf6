// A host's queue directory (<remote_job_dir>/queues, wrapper.sh "Queue admission") seen from the client: where it
// is, and its live admitted and waiting jobs read in one round trip (liveness judged on the host, as wrappers do).
import type { QueueSnapshot } from "../../core/backend/backend.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { parseQueueSnapshot, QUEUE_SNAPSHOT } from "../../wrapper/host-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

/** The queue directory of a prepared remote root (absolute). */
export function queueDirOf(root: string): string {
  return `${root}/queues`;
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
