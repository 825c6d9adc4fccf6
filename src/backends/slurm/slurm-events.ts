// Owns the event path of one Slurm cluster: the login side watches a job directory (this machine's file system, or
// the SSH host's watch channel) for the wrapper's exit record, and then asks sacct about that one job, backing off,
// for Slurm's final word (OOM, node failure) instead of waiting for the next poll round.
import { existsSync, type FSWatcher, watch } from "node:fs";
import { join } from "node:path";
import { FILES } from "../../wrapper/protocol.ts";
import type { SshWatch } from "../ssh/ssh-watch.ts";
import type { CommandRunner } from "./runner.ts";
import { parseSacct, sacctArgs } from "./slurm-queries.ts";
import type { PollEntry } from "./slurm-round.ts";
import { mapSlurmRow } from "./slurm-states.ts";

/** How often the local watch also looks for the exit record (inotify misses writes by other NFS clients). */
export const LOCAL_LOOK_MS = 500;
/** How long Slurm may run a job before a missing started record means the directory is not shared. */
export const NOT_SHARED_AFTER_MS = 60_000;
/** Confirmations are asked this far apart while Slurm's accounting may still be catching up with the job's end. */
const FIRST_CONFIRM_GAP_MS = 500;
/** That many are asked at the first gap (the first seconds after the exit record); each later gap doubles. */
const STEADY_CONFIRMS = 4;

/**
 * How long after its `asks`-th sacct a job's next confirmation waits: 0.5 s for the first STEADY_CONFIRMS (a job's
 * end reaches Slurm's accounting a moment after its exit record: a gap doubling from the first ask made an answer
 * that lagged by a second wait 1.5-3.5 s), then doubling up to `maxGapMs` (the poll interval).
 */
export function confirmGapMs(asks: number, maxGapMs: number): number {
  const doublings = Math.max(0, asks - STEADY_CONFIRMS);
  return Math.min(maxGapMs, FIRST_CONFIRM_GAP_MS * 2 ** Math.min(doublings, 30));
}

/** Why the event path is off for a cluster, or null when it is on. */
export type EventsOff = string | null;

/** Resolves when the job directory's exit record is there (or on timeout/abort). */
export type ExitWatch = (dir: string, timeoutMs: number, signal?: AbortSignal) => Promise<void>;

interface Confirmation {
  /** The last answer: the job's sacct line, or an error. */
  entry?: PollEntry;
  error?: string;
  atMs: number;
  gapMs: number;
  /** sacct calls made for this job so far. */
  asks: number;
  pending?: Promise<void>;
}

export class SlurmEvents {
  private readonly confirmations = new Map<string, Confirmation>();
  /** Why the event path is off for this cluster by configuration (null: on). */
  readonly off: EventsOff;
  /** Why the job directory seems not shared with the login node (null: no sign of that). */
  notShared: EventsOff = null;

  constructor(
    private readonly runner: CommandRunner,
    private readonly watchExit: ExitWatch,
    opts: { off: EventsOff; callTimeoutMs: number; maxGapMs: number },
  ) {
    this.off = opts.off;
    this.callTimeoutMs = opts.callTimeoutMs;
    this.maxGapMs = opts.maxGapMs;
  }

  private readonly callTimeoutMs: number;
  private readonly maxGapMs: number;

  get on(): boolean {
    return this.off === null && this.notShared === null;
  }

  /** Why completion is observed by polling only, or null when the event path is on. */
  get offReason(): EventsOff {
    return this.off ?? this.notShared;
  }

  /**
   * The directory is not shared when Slurm has run the job for NOT_SHARED_AFTER_MS and the login side still sees no
   * started record in it (the wrapper writes one at once on the compute node); a started record seen says it is.
   */
  judgeSharing(dir: string, slurmJobId: string, entry: PollEntry, startedSeen: boolean): void {
    if (startedSeen) {
      this.notShared = null;
      return;
    }
    const start = entry.sacct?.start;
    const startMs = start === undefined ? Number.NaN : new Date(start).getTime();
    if (entry.squeue?.slurmState !== "RUNNING" || !(Date.now() - startMs >= NOT_SHARED_AFTER_MS)) return;
    this.notShared = `Slurm job ${slurmJobId} has run since ${start} but the login node sees no started record in ${dir}: slurm_job_dir seems not shared with the login node`;
  }

  /** Resolves when the exit record is in `dir`, or when the job's next confirmation is due, or on timeout/abort. */
  wait(dir: string, slurmJobId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const c = this.confirmations.get(slurmJobId);
    if (c !== undefined)
      return sleepFor(Math.min(Math.max(0, c.atMs + c.gapMs - Date.now()), timeoutMs), signal);
    return this.watchExit(dir, timeoutMs, signal);
  }

  /** Resolves once the exit record is in `dir` (or on abort). */
  exitIn(dir: string, signal: AbortSignal): Promise<void> {
    return this.watchExit(dir, 24 * 3600 * 1000, signal);
  }

  /**
   * Slurm's word on a job whose exit record the login side has read: sacct for that job alone, asked again only after
   * a gap (confirmGapMs: 0.5 s for the first few, then doubling up to the poll interval); between asks the last
   * answer stands.
   */
  async confirm(slurmJobId: string, sinceMs: number): Promise<{ entry?: PollEntry; error?: string }> {
    let c = this.confirmations.get(slurmJobId);
    if (c === undefined) {
      c = { atMs: 0, gapMs: 0, asks: 0 };
      this.confirmations.set(slurmJobId, c);
    }
    const conf = c;
    if (conf.pending === undefined && Date.now() >= conf.atMs + conf.gapMs) {
      conf.pending = this.ask(slurmJobId, sinceMs, conf).finally(() => {
        conf.pending = undefined;
      });
    }
    if (conf.pending !== undefined) await conf.pending;
    return { ...(conf.entry ? { entry: conf.entry } : {}), ...(conf.error ? { error: conf.error } : {}) };
  }

  private async ask(id: string, sinceMs: number, c: Confirmation): Promise<void> {
    c.atMs = Date.now();
    c.asks++;
    c.gapMs = confirmGapMs(c.asks, this.maxGapMs);
    try {
      const r = await this.runner.exec(sacctArgs([id], new Date(sinceMs)), { timeoutMs: this.callTimeoutMs });
      if (r.code !== 0)
        throw new Error(
          `sacct failed on ${this.runner.label} (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
        );
      let entry: PollEntry | undefined;
      // a requeued job has several allocation lines: the last one is the current attempt
      for (const row of parseSacct(r.stdout)) {
        if (row.step !== undefined || row.slurmJobId !== id) continue;
        // still active for accounting: read as squeue would list it (running, tearing down)
        entry = mapSlurmRow(row, "sacct").kind === "active" ? { squeue: row, sacct: row } : { sacct: row };
      }
      c.entry = entry;
      c.error = undefined;
    } catch (e) {
      c.error = (e as Error).message;
    }
  }

  /** The job ended (or its exit record went away, a requeue): no more confirmations. */
  forget(slurmJobId: string): void {
    this.confirmations.delete(slurmJobId);
  }
}

/** The exit-record watch of a job directory on this machine: inotify, and a look every LOCAL_LOOK_MS besides. */
export function localExitWatch(dir: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const exit = join(dir, FILES.exit);
    let watcher: FSWatcher | null = null;
    const done = () => {
      clearTimeout(timer);
      clearInterval(look);
      signal?.removeEventListener("abort", done);
      watcher?.close();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, timeoutMs));
    const look = setInterval(() => {
      if (existsSync(exit)) done();
    }, LOCAL_LOOK_MS);
    if (signal?.aborted) return done();
    signal?.addEventListener("abort", done, { once: true });
    try {
      watcher = watch(dir, { persistent: true }, (_event, name) => {
        if (name !== null && String(name) === FILES.exit) done();
      });
      watcher.on("error", () => undefined);
    } catch {
      // no directory yet, or no inotify: the look is the fallback
    }
    if (existsSync(exit)) done();
  });
}

/** The exit-record watch of a job directory on an SSH login node: its one watch channel. */
export function sshExitWatch(w: SshWatch): ExitWatch {
  return async (dir, timeoutMs, signal) => {
    const until = Date.now() + timeoutMs;
    // the channel also reports started and heartbeat changes: wait on until the exit record is among them
    for (;;) {
      await w.wait(dir, Math.max(0, until - Date.now()), signal);
      if (w.sawExit(dir) || Date.now() >= until || signal?.aborted) return;
    }
  };
}

export function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    if (signal?.aborted) return done();
    signal?.addEventListener("abort", done, { once: true });
  });
}
