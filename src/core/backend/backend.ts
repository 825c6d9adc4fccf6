// What every backend offers the job engine: launch, observe, cancel, read logs and artifacts, watch.

import type { LogQuery, LogScan } from "../logs/log-query.ts";
import type { DependencyPlan, DependencyWait } from "../model/dependency-plan.ts";
import type { ArtifactEntry, BackendId, BackendName, Job } from "../model/job.ts";
import type { Observation } from "../model/observation.ts";
import type { LeftoverStop } from "../model/service-api.ts";
import type { JobDirScope } from "../util/job-dir-guard.ts";

export interface LaunchInput {
  job: Job;
  /** Values of the job's secret_env names; written only into the 0600 spec file the wrapper reads. */
  secretValues: Record<string, string>;
  graceSeconds: number;
  logCapBytes: number;
  /** Wait on the target for a queue slot and/or resource locks before starting (backends whose capabilities have namedQueues). */
  admission?: LaunchAdmission;
  /** Parents to wait for on the target, or a condition already impossible (src/core/dependencies/dependency-rules.ts). */
  after?: DependencyPlan;
}

/** One task of an array launched by Backend.launchArray. */
export interface ArrayTaskLaunch {
  input: LaunchInput;
  index: number;
}

/** The array a Backend.launchArray call belongs to (all its indices, so a resumed launch splits it the same way). */
export interface ArrayLaunch {
  arrayId: string;
  indices: readonly number[];
  /** At most this many tasks run at once (equal to the task count: no limit). */
  throttle: number;
  resumed: boolean;
}

/** Queue admission of one launch; the backend adds its target's queue directory. */
export interface LaunchAdmission {
  queue: string | null;
  concurrency: number;
  resources: string[];
}

/** The target's queue directory now: admitted and waiting jobs (waiting in FIFO order). */
export interface QueueSnapshot {
  running: { job_id: string; queue: string | null }[];
  waiting: { job_id: string; queue: string | null; ticket: number }[];
}

export interface LogTail {
  /** The last bytes of the stream (up to what was asked). */
  bytes: Uint8Array;
  /** Bytes the command wrote in total, including dropped ones. */
  totalBytes: number;
  /** Bytes removed from the middle by the log cap. */
  droppedBytes: number;
}

export type Stream = "stdout" | "stderr";

/** cancel.sh's one stdout line (`WORD sentence`) as a LeftoverStop; anything else reads as none. */
export function parseCancelOutcome(stdout: string): LeftoverStop {
  const line = stdout.trim().split("\n").pop() ?? "";
  const sp = line.indexOf(" ");
  const word = sp < 0 ? line : line.slice(0, sp);
  const detail = sp < 0 ? "" : line.slice(sp + 1);
  if (word === "signalled" || word === "stopping" || word === "refused") return { action: word, detail };
  return { action: "none", detail: detail || "nothing to stop" };
}

/**
 * What a backend can do, which core asks instead of comparing backend names. Each backend declares its values once
 * (src/backends/capabilities.ts); core gets the table by name through ServiceSettings.capabilitiesOf, for a request
 * checked before its backend is built.
 */
export interface BackendCapabilities {
  /** How messages name this kind of target ("Slurm"). */
  readonly label: string;
  /** Jobs run on this machine: their working directory and --log-dir are resolved and checked here. */
  readonly runsHere: boolean;
  /** The job's directory on its target is backend_id.remote_dir (job_dir is only a local copy of its spec). */
  readonly remoteJobDir: boolean;
  /**
   * A scheduler decides when a job starts (it is `queued` until the scheduler starts it) and takes options of its own
   * (slurm_options).
   */
  readonly schedulesItself: boolean;
  /**
   * The scheduler holds a child until its parents end (its own dependency on their scheduler jobs, moved to a retried
   * parent's next one; held for :failed/:any on a parent with retries) instead of the wrapper waiting on the target.
   */
  readonly nativeDependencies: boolean;
  /** An array is one scheduler submission per chunk (Backend.launchArray), bounded by the scheduler's own %N. */
  readonly nativeArrays: boolean;
  /** The wrapper honours LaunchInput.admission: jobs can wait in named queues and for resource locks. */
  readonly namedQueues: boolean;
  /** A job can keep what its command leaves running after it ends (keep_leftovers). */
  readonly keepsLeftovers: boolean;
}

/** The capabilities of a backend known only by name. */
export type CapabilitiesOf = (backend: BackendName) => BackendCapabilities;

export interface Backend {
  readonly name: BackendName;
  readonly capabilities: BackendCapabilities;
  /** The target's queue directory (backends whose capabilities have namedQueues). */
  queueSnapshot?(host: string | null): Promise<QueueSnapshot>;
  /** Backend-specific launch options (Slurm resources), checked and canonicalized before anything is reserved. */
  checkOptions?(raw: Record<string, string>): Record<string, string>;
  launch(input: LaunchInput): Promise<BackendId>;
  /**
   * A job array in one scheduler submission (Slurm: `sbatch --array`, its own %N): launches these reserved tasks of
   * the array and answers, per task in order, its backend identity or why it was not submitted. `resumed`: an earlier
   * submit may have submitted some of them already (they are adopted by the array's tag, never submitted twice).
   */
  launchArray?(tasks: ArrayTaskLaunch[], array: ArrayLaunch): Promise<(BackendId | Error)[]>;
  /** Signals many tasks of one array at once (Slurm: one scancel per submission); intent is already persisted. */
  cancelMany?(jobs: Job[], graceSeconds: number): Promise<void>;
  /**
   * `look.parentMayRetry`: a parent with retries is active (Slurm: a never-satisfied dependency is not final yet);
   * `look.heldFailed`: a held Slurm child whose dependency can no longer hold (it is ended, never run).
   */
  observe(job: Job, look?: { parentMayRetry?: boolean; heldFailed?: boolean }): Promise<Observation>;
  /**
   * The reconcile rules ended the job (or its attempt) with `observation`, this backend's last of it: a backend that
   * follows jobs between looks (Slurm's rounds and watches) stops following it. Told once per end, by the look that
   * found it; the rules are applied by core only.
   */
  ended?(job: Job, observation: Observation): Promise<void>;
  /** Persisted intent already exists in the store; this signals the target. */
  cancel(job: Job, graceSeconds: number): Promise<unknown>;
  /**
   * A job lost with its wrapper killed: stops the command's group still running (one TERM, KILL after the grace)
   * when its leader is certainly the job's command (pid > 1, start time as recorded); says what was done.
   */
  stopLeftover?(job: Job, graceSeconds: number): Promise<LeftoverStop>;
  /**
   * A job with retries has ended (`outcome`: succeeded or not): tells the dependents held on its target (wrapper.sh
   * "Dependencies", the `final` record) and wakes them. False when that could not be written now.
   */
  writeFinal?(job: Job, outcome: "ok" | "failed"): Promise<boolean>;
  /** Slurm: points a pending job's native dependency at these parents' current scheduler jobs (a retry's new one). */
  redepend?(job: Job, waits: DependencyWait[]): Promise<void>;
  /** Slurm: releases a job submitted held (heldChildNow says when). */
  release?(job: Job): Promise<void>;
  readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail>;
  /**
   * Answers `query` over the whole retained log (head, a marker line where the log cap dropped bytes, rolling tail),
   * on the machine that holds it, without moving the log: streamed here, one remote program on a host.
   */
  scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan>;
  collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]>;
  secretValues(job: Job): Promise<Record<string, string>>;
  /**
   * Resolves on the next change of the job's lifecycle files (start, exit record), or of any file
   * (output too) when `anyFile`, or after `timeoutMs`, or when `signal` aborts. Resolves to `true` (only) when the
   * lifecycle files were watched by events (inotify), so a change would have ended the wait at once.
   */
  waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal, anyFile?: boolean): Promise<unknown>;
  /**
   * Removes the job's files (gc of finished jobs, a launch undone), each path checked by the one guard
   * (core/util/job-dir-guard.ts) against `scope` first: a path that is not the job's own directory is refused
   * (JobDirRefused) before anything is removed.
   */
  remove(job: Job, scope: JobDirScope): Promise<void>;
  /**
   * True only when certain that no wrapper of this job was ever started (nothing was written where a launch writes
   * before it starts one); false when anything was, or the target cannot be asked. Asked only once the process that
   * owned the launch is gone.
   */
  neverLaunched?(job: Job): Promise<boolean>;
  /** How the job's completion is (or was) observed, for inspect (Slurm: the event path or polling, and why). */
  completionNote?(job: Job): string;
}
