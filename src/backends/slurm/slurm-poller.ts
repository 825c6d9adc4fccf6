// Owns scheduler-friendly polling of one cluster: one squeue + one sacct per interval for every job the processes of
// this machine watch. With the store's shared rounds, the process holding a round's lease polls for the union of all
// processes' jobs and writes the snapshot; the others read it. No round starts sooner than the floor after the last.
import type { CommandRunner } from "./runner.ts";
import { type PollSnapshot, runRound } from "./slurm-round.ts";
import { SharedRoundLink, type SharedRounds } from "./slurm-shared-rounds.ts";

export type { PollEntry, PollSnapshot } from "./slurm-round.ts";
export type { SharedRounds } from "./slurm-shared-rounds.ts";

export interface PollerOptions {
  /** The regular interval between rounds. */
  intervalMs: number;
  /** The floor: no round starts sooner than this after the last one (default: intervalMs). */
  minIntervalMs?: number;
  /** Backoff ceiling (default: the larger of 60 s and 4 intervals). */
  maxIntervalMs?: number;
  /** Per-call timeout. */
  callTimeoutMs?: number;
  /** A job no observer asked about for this long is dropped from rounds. */
  interestMs?: number;
  /** Rounds shared with the other processes of this machine through the store, under `key` (the cluster). */
  shared?: { rounds: SharedRounds; key: string };
}

/** How often a process waiting on another's round looks for its snapshot. */
const RECHECK_MS = 250;

interface Tracked {
  sinceMs: number;
  interestMs: number;
  /** Until when the store holds this process's interest in the job (shared rounds). */
  sharedUntilMs: number;
}

interface Waiter {
  id: string;
  /** A job no snapshot covers yet: the next round may start as soon as the floor allows. */
  urgent: boolean;
  /** Only a round that started after this time answers the waiter. */
  afterAtMs: number;
  resolve: (s: PollSnapshot) => void;
}

export class SlurmPoller {
  private readonly tracked = new Map<string, Tracked>();
  private readonly waiters = new Set<Waiter>();
  private last: PollSnapshot | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private ticking = false;
  private readonly intervalMs: number;
  /** No round starts sooner than this after the last one (the floor). */
  readonly floorMs: number;
  private readonly maxIntervalMs: number;
  private readonly callTimeoutMs: number;
  private readonly link: SharedRoundLink | undefined;

  constructor(
    private readonly runner: CommandRunner,
    private readonly opts: PollerOptions,
  ) {
    this.floorMs = Math.max(0, opts.minIntervalMs ?? opts.intervalMs);
    this.intervalMs = Math.max(opts.intervalMs, this.floorMs);
    this.maxIntervalMs = Math.max(
      this.intervalMs,
      opts.maxIntervalMs ?? Math.max(60_000, 4 * this.intervalMs),
    );
    this.callTimeoutMs = opts.callTimeoutMs ?? 30_000;
    this.link = opts.shared ? new SharedRoundLink(opts.shared.rounds, opts.shared.key) : undefined;
  }

  /** The current interval (grows with backoff). */
  get currentIntervalMs(): number {
    return this.last ? Math.max(this.intervalMs, this.last.nextAtMs - this.last.atMs) : this.intervalMs;
  }

  private get keepMs(): number {
    return this.opts.interestMs ?? Math.max(60_000, 10 * this.intervalMs);
  }

  private touch(id: string, sinceMs: number): void {
    const t = this.tracked.get(id);
    if (t) {
      t.interestMs = Date.now();
      t.sinceMs = Math.min(t.sinceMs, sinceMs);
      return;
    }
    this.tracked.set(id, { sinceMs, interestMs: Date.now(), sharedUntilMs: 0 });
  }

  /** Registers a job for the next round without waiting for it (an array's tasks, all in one round). */
  track(id: string, sinceMs: number): void {
    this.touch(id, sinceMs);
  }

  /** Stops polling a job (it reached a terminal state). */
  forget(id: string): void {
    if (this.tracked.delete(id)) this.link?.drop([id]);
  }

  /**
   * The latest view of a job: the last round's while it is fresh (its interval has not ended) and asked about the job;
   * otherwise the next round's. A job no round asked about yet is polled as soon as the floor allows (batched with
   * the others asking meanwhile, in this process and the others sharing the store).
   */
  view(id: string, sinceMs: number): Promise<PollSnapshot> {
    this.touch(id, sinceMs);
    this.adoptShared();
    const last = this.last;
    const covered = last?.ids.has(id) === true;
    // a job new to this process may already be in a fresh round another process ran
    if (covered && last !== null && Date.now() < last.nextAtMs) return Promise.resolve(last);
    return new Promise((resolve) => {
      this.waiters.add({ id, urgent: !covered, afterAtMs: covered ? (last?.atMs ?? -1) : -1, resolve });
      this.schedule();
    });
  }

  /**
   * True when view() would answer without waiting for the floor or a backoff: a fresh round covers the job, or a round
   * may start now. Registers the job either way, so the next round, whichever process runs it, covers it.
   */
  answerableNow(id: string, sinceMs: number): boolean {
    this.touch(id, sinceMs);
    this.adoptShared();
    const last = this.last;
    const now = Date.now();
    if (last === null) return true;
    if (last.ids.has(id) && now < last.nextAtMs) return true;
    return now >= this.allowedAtMs(true);
  }

  /** Resolves after the next round that includes this job completes, or after timeoutMs, or on abort. */
  waitForPoll(id: string, sinceMs: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.touch(id, sinceMs);
    return new Promise<void>((resolve) => {
      // a job no round has covered yet (just submitted) gets its first round as soon as the floor allows
      const urgent = this.last?.ids.has(id) !== true;
      const w: Waiter = { id, urgent, afterAtMs: this.last?.atMs ?? -1, resolve: () => done() };
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(w);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, Math.max(0, timeoutMs));
      if (signal?.aborted) return done();
      signal?.addEventListener("abort", done, { once: true });
      this.waiters.add(w);
      this.schedule();
    });
  }

  /** Stops the timer and withdraws this process's interests from the store. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.tracked.size > 0) this.link?.drop([...this.tracked.keys()]);
    this.tracked.clear();
  }

  /** When the next round may start for the waiters there are (Infinity: none). */
  private dueMs(): number {
    if (this.waiters.size === 0) return Number.POSITIVE_INFINITY;
    return this.allowedAtMs([...this.waiters].some((w) => w.urgent));
  }

  /** The earliest start of the next round: the last one's due time, or for a job no round covers, the floor. */
  private allowedAtMs(urgent: boolean): number {
    const last = this.last;
    if (last === null) return Date.now();
    // after an error, the backoff holds for new jobs too; otherwise a new job waits at most the floor
    if (!urgent || last.error !== undefined) return last.nextAtMs;
    return Math.min(last.nextAtMs, last.atMs + this.floorMs);
  }

  private schedule(atMs = this.dueMs()): void {
    if (!Number.isFinite(atMs) || this.ticking) return;
    if (this.timer && this.timerAtMs <= atMs) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAtMs = atMs;
    this.timer = setTimeout(() => void this.tick(), Math.max(0, atMs - Date.now()));
  }

  private deliver(s: PollSnapshot): void {
    if (this.last === null || s.atMs > this.last.atMs) this.last = s;
    for (const w of [...this.waiters]) {
      if (s.atMs > w.afterAtMs && (s.ids.has(w.id) || s.error !== undefined)) {
        this.waiters.delete(w);
        w.resolve(s);
      }
    }
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.timerAtMs = Number.POSITIVE_INFINITY;
    this.ticking = true;
    let recheckAtMs: number | undefined;
    try {
      this.adoptShared();
      if (Date.now() < this.dueMs()) return;
      const link = this.link;
      if (link === undefined) {
        const { ids, sinceMs } = this.activeIds();
        this.deliver(await runRound(this.runner, ids, sinceMs, this.pacing, this.currentIntervalMs));
        return;
      }
      const claimed = this.claim(link);
      if (claimed === "someone") {
        // another process runs this round: read its snapshot shortly
        recheckAtMs = Date.now() + RECHECK_MS;
        return;
      }
      const own = this.activeIds();
      const ids = claimed === "store down" ? own.ids : claimed.map((i) => i.item);
      const sinceMs =
        claimed === "store down" ? own.sinceMs : Math.min(Date.now(), ...claimed.map((i) => i.sinceMs));
      const snap = await runRound(this.runner, ids, sinceMs, this.pacing, this.currentIntervalMs);
      if (claimed !== "store down") link.publish(snap);
      this.deliver(snap);
    } finally {
      this.ticking = false;
      this.schedule(recheckAtMs === undefined ? this.dueMs() : Math.min(recheckAtMs, this.dueMs()));
    }
  }

  private get pacing() {
    return {
      intervalMs: this.intervalMs,
      maxIntervalMs: this.maxIntervalMs,
      callTimeoutMs: this.callTimeoutMs,
    };
  }

  /** Takes the round's lease with this process's interests: the union to ask about, or why not. */
  private claim(link: SharedRoundLink): ReturnType<SharedRoundLink["claim"]> {
    const now = Date.now();
    const mine = this.activeIds().ids.map((id) => ({
      item: id,
      sinceMs: this.tracked.get(id)?.sinceMs ?? now,
    }));
    const untilMs = now + this.keepMs;
    // both calls run side by side under one timeout: a holder that died is replaced once its lease has passed
    const got = link.claim(mine, untilMs, this.last?.atMs ?? null, this.callTimeoutMs + 5000);
    if (got === "store down") return got;
    for (const id of mine) {
      const t = this.tracked.get(id.item);
      if (t) t.sharedUntilMs = untilMs;
    }
    if (got === "someone") this.adoptShared();
    return got;
  }

  /**
   * Reads the store's latest round and delivers it when it is newer than ours; registers the jobs this process
   * watches that the store does not hold yet (or soon no longer), so the next round, whoever runs it, covers them.
   */
  private adoptShared(): void {
    const link = this.link;
    if (link === undefined) return;
    const now = Date.now();
    const due = [...this.tracked]
      .filter(([, t]) => t.sharedUntilMs < now + this.keepMs / 2 && now - t.interestMs <= this.keepMs)
      .map(([id, t]) => ({ item: id, sinceMs: t.sinceMs }));
    const untilMs = now + this.keepMs;
    if (due.length > 0 && link.register(due, untilMs)) {
      for (const d of due) {
        const t = this.tracked.get(d.item);
        if (t) t.sharedUntilMs = untilMs;
      }
    }
    const snap = link.latest(this.last?.atMs ?? null);
    if (snap) this.deliver(snap);
  }

  private activeIds(): { ids: string[]; sinceMs: number } {
    const now = Date.now();
    let sinceMs = now;
    const ids: string[] = [];
    for (const [id, t] of this.tracked) {
      if (now - t.interestMs > this.keepMs) {
        this.tracked.delete(id);
        continue;
      }
      ids.push(id);
      sinceMs = Math.min(sinceMs, t.sinceMs);
    }
    ids.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    return { ids, sinceMs };
  }
}
