// The wrapper's `queued` record (a queued job's place in line, then its admission): parser and local reader.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseKeyValue } from "./records.ts";

/** What a waiting wrapper last saw under the admission lock (wrapper.sh "Queue admission"). */
export interface QueuedRecord {
  /** Empty when the job waits for resources only. */
  queue: string;
  concurrency: number;
  resources: string[];
  ticket: number;
  /** 1 = next in line. */
  position: number;
  /** Earlier waiting jobs that share the queue or a resource. */
  ahead: number;
  /** Running jobs of the queue. */
  running: number;
  /** A running job holds one of this job's resources. */
  held: boolean;
  sinceEpochSeconds: number;
  /** Set once admitted: the command starts right after. */
  admittedAtEpochSeconds?: number;
  /** Held for a dependency (wrapper.sh "Dependencies"): the first parent condition still awaited, JOB_ID:ON. */
  after?: string;
}

function int(value: string | undefined): number | undefined {
  return value !== undefined && /^[0-9]+$/.test(value) ? Number(value) : undefined;
}

/** Parses a `queued` file; null when incomplete (it is written atomically, so only a foreign file is). */
export function parseQueued(text: string): QueuedRecord | null {
  const r = parseKeyValue(text);
  const since0 = int(r.since);
  if (r.after && since0 !== undefined) {
    const none = { queue: "", concurrency: 1, resources: [], ticket: 0, position: 1, ahead: 0, running: 0 };
    return { ...none, held: false, sinceEpochSeconds: since0, after: r.after };
  }
  const ticket = int(r.ticket);
  const position = int(r.position);
  const ahead = int(r.ahead);
  const running = int(r.running);
  const concurrency = int(r.concurrency);
  const since = int(r.since);
  if (
    ticket === undefined ||
    position === undefined ||
    ahead === undefined ||
    running === undefined ||
    concurrency === undefined ||
    since === undefined
  ) {
    return null;
  }
  const admitted = int(r.admitted_at);
  return {
    queue: r.queue ?? "",
    concurrency,
    resources: (r.resources ?? "").split(" ").filter((x) => x !== ""),
    ticket,
    position,
    ahead,
    running,
    held: r.held === "1",
    sinceEpochSeconds: since,
    ...(admitted !== undefined ? { admittedAtEpochSeconds: admitted } : {}),
  };
}

/** The job directory's `queued` record, or null when the job never queued (or the file is unreadable). */
export function readQueued(dir: string): QueuedRecord | null {
  try {
    return parseQueued(readFileSync(join(dir, "queued"), "utf8"));
  } catch {
    return null;
  }
}
