// This machine's queue directory (wrapper.sh "Queue admission"), and a queued record as the engine's QueuedInfo.
import { join } from "node:path";
import type { QueuedInfo } from "../../core/model/observation.ts";
import type { QueuedRecord } from "../../wrapper/protocol.ts";

/** Where local wrappers wait for their turn: shared by every client of this data directory. */
export function localQueueDir(dataDir: string): string {
  return join(dataDir, "queues");
}

export function toQueuedInfo(r: QueuedRecord): QueuedInfo {
  return {
    queue: r.queue || null,
    position: r.position,
    ahead: r.ahead,
    running: r.running,
    concurrency: r.concurrency,
    held: r.held,
    resources: r.resources,
    admitted: r.admittedAtEpochSeconds !== undefined,
    ...(r.after ? { after: r.after } : {}),
  };
}
