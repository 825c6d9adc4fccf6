// Owns one scheduler round for a cluster: one squeue + one sacct for a set of Slurm job IDs, the snapshot it yields,
// the next round's time (backoff when the scheduler errs or answers slowly), and the snapshot's text in the store.
import type { CommandRunner } from "./runner.ts";
import {
  arrayTaskOf,
  expandCollapsedArrayId,
  parseSacct,
  parseSqueue,
  type SlurmRow,
  sacctArgs,
  squeueArgs,
} from "./slurm-queries.ts";

export interface PollEntry {
  squeue?: SlurmRow;
  /** `collapsed`: the array task's line is its array's collapsed one (`123_[4-9%2]`): pending tasks have no own line. */
  sacct?: SlurmRow & { collapsed?: true };
}

/**
 * What the round's squeue/sacct ask for: array tasks (`123_4`) by their array job (`123`), which lists every task of
 * it, so a 1,000-task array is one ID on the command line; other IDs as they are.
 */
export function queryIds(ids: readonly string[]): string[] {
  return [...new Set(ids.map((id) => arrayTaskOf(id)?.arrayJobId ?? id))];
}

export interface PollSnapshot {
  /** When the round started (ms since epoch). */
  atMs: number;
  /** When the next regular round is due (ms since epoch): atMs plus the interval, backoff included. */
  nextAtMs: number;
  /** The Slurm job IDs the round asked about. */
  ids: Set<string>;
  rows: Map<string, PollEntry>;
  /** Set when squeue or sacct failed: rows are then empty. */
  error?: string;
}

export interface RoundPacing {
  /** The regular interval (ms), never below the floor. */
  intervalMs: number;
  /** Backoff ceiling (ms). */
  maxIntervalMs: number;
  callTimeoutMs: number;
}

/** Runs one round: squeue and sacct side by side for `ids`, both answers required. */
export async function runRound(
  runner: CommandRunner,
  ids: readonly string[],
  sinceMs: number,
  pacing: RoundPacing,
  previousIntervalMs: number,
): Promise<PollSnapshot> {
  const atMs = Date.now();
  const snapshot: PollSnapshot = {
    atMs,
    nextAtMs: atMs + pacing.intervalMs,
    ids: new Set(ids),
    rows: new Map(),
  };
  if (ids.length === 0) return snapshot;
  const timeoutMs = pacing.callTimeoutMs;
  try {
    const [q, a] = await Promise.all([
      runner.exec(squeueArgs(queryIds(ids)), { timeoutMs }),
      runner.exec(sacctArgs(queryIds(ids), new Date(sinceMs)), { timeoutMs }),
    ]);
    for (const [what, r] of [
      ["squeue", q],
      ["sacct", a],
    ] as const) {
      if (r.code !== 0) {
        throw new Error(
          `${what} failed on ${runner.label} (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
        );
      }
    }
    for (const row of parseSqueue(q.stdout)) {
      if (row.step === undefined && snapshot.ids.has(row.slurmJobId)) {
        snapshot.rows.set(row.slurmJobId, { squeue: row });
      }
    }
    const collapsed: SlurmRow[] = [];
    for (const row of parseSacct(a.stdout)) {
      if (row.step === undefined && expandCollapsedArrayId(row.slurmJobId)) collapsed.push(row);
      if (row.step !== undefined || !snapshot.ids.has(row.slurmJobId)) continue;
      const entry = snapshot.rows.get(row.slurmJobId) ?? {};
      // a requeued job has several allocation lines: the last one is the current attempt
      entry.sacct = row;
      snapshot.rows.set(row.slurmJobId, entry);
    }
    // a task without a line of its own (pending, or cancelled while pending) gets its array's collapsed line
    for (const row of collapsed) {
      for (const id of expandCollapsedArrayId(row.slurmJobId) ?? []) {
        if (!snapshot.ids.has(id)) continue;
        const entry = snapshot.rows.get(id) ?? {};
        if (entry.sacct !== undefined) continue;
        entry.sacct = { ...row, slurmJobId: id, collapsed: true };
        snapshot.rows.set(id, entry);
      }
    }
    const tookMs = Date.now() - atMs;
    // slow scheduler: poll less often, in proportion to how long it took to answer
    const next =
      tookMs > pacing.intervalMs / 2
        ? Math.min(pacing.maxIntervalMs, Math.max(previousIntervalMs, 2 * tookMs, pacing.intervalMs))
        : pacing.intervalMs;
    snapshot.nextAtMs = atMs + next;
  } catch (e) {
    snapshot.error = (e as Error).message;
    snapshot.rows.clear();
    // the scheduler erred or did not answer: back off, doubling up to the ceiling
    const next = Math.min(pacing.maxIntervalMs, Math.max(pacing.intervalMs, previousIntervalMs) * 2);
    snapshot.nextAtMs = atMs + next;
  }
  return snapshot;
}

/** The snapshot as stored in the shared round (its times live in their own columns). */
export function snapshotText(s: PollSnapshot): string {
  return JSON.stringify({
    ids: [...s.ids],
    rows: [...s.rows],
    ...(s.error === undefined ? {} : { error: s.error }),
  });
}

/** A stored snapshot back; undefined when the text is not one (written by another version): a new round is due. */
export function parseSnapshotText(text: string, atMs: number, nextAtMs: number): PollSnapshot | undefined {
  try {
    const o = JSON.parse(text) as { ids?: unknown; rows?: unknown; error?: unknown };
    if (!Array.isArray(o.ids) || !Array.isArray(o.rows)) return undefined;
    return {
      atMs,
      nextAtMs,
      ids: new Set(o.ids.map(String)),
      rows: new Map(o.rows as [string, PollEntry][]),
      ...(typeof o.error === "string" ? { error: o.error } : {}),
    };
  } catch {
    return undefined;
  }
}
