// Owns scheduler-friendly polling of one cluster: one squeue + one sacct per interval for every job this process
// watches, shared by all observers and waiters, with backoff when the scheduler errs or is slow.
import type { CommandRunner } from "./runner.ts";
import { parseSacct, parseSqueue, type SlurmRow, sacctArgs, squeueArgs } from "./slurm-queries.ts";

export interface PollEntry {
  squeue?: SlurmRow;
  sacct?: SlurmRow;
}

export interface PollSnapshot {
  /** When the poll started (ms since epoch). */
  atMs: number;
  /** The Slurm job IDs the poll asked about. */
  ids: Set<string>;
  rows: Map<string, PollEntry>;
  /** Set when squeue or sacct failed: rows are then empty. */
  error?: string;
}

export interface PollerOptions {
  intervalMs: number;
  /** Backoff ceiling. */
  maxIntervalMs?: number;
  /** Per-call timeout. */
  callTimeoutMs?: number;
  /** A job no observer asked about for this long is dropped from polls. */
  interestMs?: number;
}

interface Tracked {
  sinceMs: number;
  interestMs: number;
}

export class SlurmPoller {
  private readonly tracked = new Map<string, Tracked>();
  private last: PollSnapshot | null = null;
  private inflight: Promise<PollSnapshot> | null = null;
  private next: { promise: Promise<PollSnapshot>; resolve: (s: PollSnapshot) => void; dueMs: number } | null =
    null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastStartMs = 0;
  private intervalMs: number;
  private readonly listeners = new Set<(s: PollSnapshot) => void>();

  constructor(
    private readonly runner: CommandRunner,
    private readonly opts: PollerOptions,
  ) {
    this.intervalMs = opts.intervalMs;
  }

  /** The current interval (grows with backoff). */
  get currentIntervalMs(): number {
    return this.intervalMs;
  }

  private touch(id: string, sinceMs: number): boolean {
    const t = this.tracked.get(id);
    if (t) {
      t.interestMs = Date.now();
      t.sinceMs = Math.min(t.sinceMs, sinceMs);
      return false;
    }
    this.tracked.set(id, { sinceMs, interestMs: Date.now() });
    return true;
  }

  /** Stops polling a job (it reached a terminal state). */
  forget(id: string): void {
    this.tracked.delete(id);
  }

  /**
   * The latest view of a job: the last poll's when it asked about the job within the current interval; otherwise the
   * next poll's. A job never polled before is polled promptly (batched with others asking in the same tick).
   */
  async view(id: string, sinceMs: number): Promise<PollSnapshot> {
    const fresh = this.touch(id, sinceMs);
    const last = this.last;
    if (!fresh && last?.ids.has(id) && Date.now() - last.atMs < this.intervalMs) return last;
    const inflight = this.inflight;
    if (inflight) {
      const s = await inflight;
      if (s.ids.has(id)) return s;
    }
    return this.schedule(fresh || !this.last?.ids.has(id));
  }

  /** Resolves after the next poll that includes this job completes, or after timeoutMs, or on abort. */
  waitForPoll(id: string, sinceMs: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.touch(id, sinceMs);
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.listeners.delete(onPoll);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const onPoll = (s: PollSnapshot) => {
        if (s.ids.has(id) || s.error !== undefined) done();
      };
      const t = setTimeout(done, Math.max(0, timeoutMs));
      if (signal?.aborted) return done();
      signal?.addEventListener("abort", done, { once: true });
      this.listeners.add(onPoll);
      void this.schedule(false);
    });
  }

  /** The next poll: at the interval's end, or as soon as the one in flight is done when `urgent`. */
  private schedule(urgent: boolean): Promise<PollSnapshot> {
    const now = Date.now();
    const due = urgent ? now : Math.max(now, this.lastStartMs + this.intervalMs);
    if (this.next && this.next.dueMs <= due) return this.next.promise;
    if (!this.next) {
      let resolve!: (s: PollSnapshot) => void;
      const promise = new Promise<PollSnapshot>((r) => {
        resolve = r;
      });
      this.next = { promise, resolve, dueMs: due };
    }
    this.next.dueMs = due;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fire(), Math.max(0, due - now));
    return this.next.promise;
  }

  private async fire(): Promise<void> {
    this.timer = null;
    if (this.inflight) await this.inflight.catch(() => undefined);
    const next = this.next;
    if (!next) return;
    this.next = null;
    const p = this.poll();
    this.inflight = p;
    const snapshot = await p;
    this.inflight = null;
    next.resolve(snapshot);
    for (const l of [...this.listeners]) l(snapshot);
  }

  private activeIds(): { ids: string[]; sinceMs: number } {
    const keepMs = this.opts.interestMs ?? Math.max(60_000, 10 * this.opts.intervalMs);
    const now = Date.now();
    let sinceMs = now;
    const ids: string[] = [];
    for (const [id, t] of this.tracked) {
      if (now - t.interestMs > keepMs) {
        this.tracked.delete(id);
        continue;
      }
      ids.push(id);
      sinceMs = Math.min(sinceMs, t.sinceMs);
    }
    ids.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    return { ids, sinceMs };
  }

  private async poll(): Promise<PollSnapshot> {
    const startMs = Date.now();
    this.lastStartMs = startMs;
    const { ids, sinceMs } = this.activeIds();
    const snapshot: PollSnapshot = { atMs: startMs, ids: new Set(ids), rows: new Map() };
    if (ids.length === 0) return snapshot;
    const timeoutMs = this.opts.callTimeoutMs ?? 30_000;
    try {
      const [q, a] = await Promise.all([
        this.runner.exec(squeueArgs(ids), { timeoutMs }),
        this.runner.exec(sacctArgs(ids, new Date(sinceMs)), { timeoutMs }),
      ]);
      for (const [what, r] of [
        ["squeue", q],
        ["sacct", a],
      ] as const) {
        if (r.code !== 0) {
          throw new Error(
            `${what} failed on ${this.runner.label} (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
          );
        }
      }
      for (const row of parseSqueue(q.stdout)) {
        if (row.step === undefined && snapshot.ids.has(row.slurmJobId)) {
          snapshot.rows.set(row.slurmJobId, { squeue: row });
        }
      }
      for (const row of parseSacct(a.stdout)) {
        if (row.step !== undefined || !snapshot.ids.has(row.slurmJobId)) continue;
        const entry = snapshot.rows.get(row.slurmJobId) ?? {};
        // a requeued job has several allocation lines: the last one is the current attempt
        entry.sacct = row;
        snapshot.rows.set(row.slurmJobId, entry);
      }
      const tookMs = Date.now() - startMs;
      const max = this.opts.maxIntervalMs ?? 60_000;
      // slow scheduler: poll less often, in proportion to how long it took to answer
      this.intervalMs =
        tookMs > this.opts.intervalMs / 2
          ? Math.min(max, Math.max(this.intervalMs, 2 * tookMs))
          : this.opts.intervalMs;
    } catch (e) {
      snapshot.error = (e as Error).message;
      snapshot.rows.clear();
      this.intervalMs = Math.min(this.opts.maxIntervalMs ?? 60_000, this.intervalMs * 2);
    }
    this.last = snapshot;
    return snapshot;
  }
}
