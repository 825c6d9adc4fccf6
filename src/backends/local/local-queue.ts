// This machine's queue directory (wrapper.sh "Queue admission"), read and touched from the client side.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { QueuedInfo, QueueSnapshot } from "../../core/backend.ts";
import { parseKeyValue, type QueuedRecord } from "../../wrapper/protocol.ts";
import { isProcessAlive, localBootId } from "./proc.ts";

/** Where local wrappers wait for their turn: shared by every client of this data directory. */
export function localQueueDir(dataDir: string): string {
  return join(dataDir, "queues");
}

function names(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** An entry counts while its wrapper lives, or (admitted) while its command does; as the wrappers judge it. */
function entryAlive(e: Record<string, string>): boolean {
  const boot = localBootId();
  if (e.boot_id && boot && e.boot_id !== boot) return false;
  const wrapper = Number(e.wrapper_pid);
  if (wrapper > 1 && isProcessAlive(wrapper, e.proc_start || null)) return true;
  const group = Number(e.pgid || e.pid);
  // 0 and 1 are never a job's (a forged entry): kill(-1, 0) would probe every process.
  if (!(group > 1)) return false;
  try {
    process.kill(e.pgid ? -group : group, 0);
    return true;
  } catch {
    return false;
  }
}

function readEntry(path: string): Record<string, string> | null {
  try {
    return parseKeyValue(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** Live admitted and waiting jobs of the directory; waiting ones in ticket (FIFO) order. */
export function readQueueSnapshot(root: string): QueueSnapshot {
  const snap: QueueSnapshot = { running: [], waiting: [] };
  for (const name of names(join(root, "running"))) {
    const e = readEntry(join(root, "running", name));
    if (e && entryAlive(e)) snap.running.push({ job_id: name, queue: e.queue || null });
  }
  for (const name of names(join(root, "waiting"))) {
    const dot = name.indexOf(".");
    const ticket = Number(name.slice(0, dot));
    const e = readEntry(join(root, "waiting", name));
    if (dot > 0 && Number.isSafeInteger(ticket) && e && entryAlive(e)) {
      snap.waiting.push({ job_id: name.slice(dot + 1), queue: e.queue || null, ticket });
    }
  }
  snap.waiting.sort((a, b) => a.ticket - b.ticket);
  return snap;
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
