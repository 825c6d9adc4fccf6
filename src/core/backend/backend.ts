// What every backend offers the job engine: launch, observe, cancel, read logs and artifacts, watch.

import type { DependencyPlan, DependencyWait } from "../dependencies/dependency-rules.ts";
import type { LogQuery, LogScan } from "../logs/log-query.ts";
import type { ArtifactEntry, BackendId, BackendName, Job, Leftovers, Resources } from "../model/job.ts";
import type { SchedulerFacts } from "../model/scheduler-facts.ts";
import type { Decision } from "../rules/decision.ts";
import type { JobDirScope } from "../util/job-dir-guard.ts";

export interface LaunchInput {
  job: Job;
  /** Values of the job's secret_env names; written only into the 0600 spec file the wrapper reads. */
  secretValues: Record<string, string>;
  graceSeconds: number;
  logCapBytes: number;
  /** Wait on the target for a queue slot and/or resource locks before starting (backends with supportsAdmission). */
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

/** A queued job's place in line, as its wrapper last wrote it (before the command starts). */
export interface QueuedInfo {
  queue: string | null;
  /** 1 = next in line. */
  position: number;
  ahead: number;
  running: number;
  concurrency: number;
  /** A running job holds one of the job's resources. */
  held: boolean;
  resources: string[];
  /** Admitted: the command is about to start. */
  admitted: boolean;
  /** Held for a dependency: the first parent condition still awaited (JOB_ID:ok|any|failed). */
  after?: string;
}

/** The target's queue directory now: admitted and waiting jobs (waiting in FIFO order). */
export interface QueueSnapshot {
  running: { job_id: string; queue: string | null }[];
  waiting: { job_id: string; queue: string | null; ticket: number }[];
}

export interface StartedInfo {
  wrapper_pid: number;
  pid: number;
  pgid: number;
  boot_id: string | null;
  started_at: string;
  /** The wrapper's /proc start time, when recorded. */
  proc_start?: string;
  /** Written by a wrapper that tracks the job's processes (and so signs its exit record): its tracking. */
  tracking?: "cgroup" | "environment";
}

export interface ExitInfo {
  /** null when the command never started (cancelled before it, e.g. while queued). */
  exit_code: number | null;
  signal: string | null;
  reason: "exited" | "timed_out" | "cancelled" | "launch_failed" | "dependency_failed";
  /** reason dependency_failed: the parent condition (JOB_ID:ok|any|failed) that could no longer hold. */
  dependency?: string;
  finished_at: string;
  descendants_alive: boolean;
  /** The disk or quota of the job's directory was full at some point: output may be missing. */
  no_space?: boolean;
  /** What the job's processes left when the command ended (processes as the wrapper listed them: not redacted yet). */
  leftovers?: Leftovers;
  /** What the job cost, as the wrapper (or the scheduler) measured it. */
  resources?: Resources;
  /** The wrapper that wrote the record, as the record says (wrappers that predate it say nothing). */
  wrapper?: { pid: number; proc_start: string | null };
}

export interface HeartbeatInfo {
  at: string;
  last_change_at: string;
  stdout_bytes: number;
  stderr_bytes: number;
  /** The wrapper's heartbeat interval in seconds, when its record says (readers derive lost-after from it). */
  interval_seconds?: number;
}

/** What the backend sees of a job right now (the wrapper's files plus liveness). */
export interface Observation {
  started: StartedInfo | null;
  exit: ExitInfo | null;
  /** Is the wrapper process alive? null when it cannot be known (never launched, or unreachable). */
  wrapperAlive: boolean | null;
  /** The target's boot ID now, to tell a reboot from a killed wrapper. */
  bootIdNow: string | null;
  /**
   * Whether the command's own process (started's pid with its start time) is alive, looked at when an exit record is
   * there while the wrapper lives (reconcile rule 2a); absent when not looked at.
   */
  commandAlive?: boolean | null;
  heartbeat: HeartbeatInfo | null;
  /** Set when the target cannot be reached now: the job keeps its state. */
  unreachable?: string;
  /** Set while the job's wrapper waits for its queue or resources (no `started` yet). */
  queued?: QueuedInfo;
  /**
   * What a scheduler (Slurm) says of the job, for what the wrapper's files cannot say: pending and why, its own ends
   * (time limit, out of memory, node failure), requeues. Facts only: the reconcile rules weigh them with the records.
   */
  scheduler?: SchedulerFacts;
  /** An outcome another program's own records settle (jobs Awaitless 0.8 still runs): taken as it is. */
  recorded?: Decision;
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

/** What cancel did about a lost job's command: TERM sent now, already stopping, refused (not certainly it), none. */
export interface LeftoverStop {
  action: "signalled" | "stopping" | "refused" | "none";
  detail: string;
}

export function isLeftoverStop(x: unknown): x is LeftoverStop {
  return typeof x === "object" && x !== null && "action" in x && "detail" in x;
}

/** cancel.sh's one stdout line (`WORD sentence`) as a LeftoverStop; anything else reads as none. */
export function parseCancelOutcome(stdout: string): LeftoverStop {
  const line = stdout.trim().split("\n").pop() ?? "";
  const sp = line.indexOf(" ");
  const word = sp < 0 ? line : line.slice(0, sp);
  const detail = sp < 0 ? "" : line.slice(sp + 1);
  if (word === "signalled" || word === "stopping" || word === "refused") return { action: word, detail };
  return { action: "none", detail: detail || "nothing to stop" };
}

export interface Backend {
  readonly name: BackendName;
  /** The wrapper this backend starts honours LaunchInput.admission (named queues, resource locks). */
  readonly supportsAdmission?: boolean;
  /** The target's queue directory (backends with supportsAdmission). */
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
  settle?(job: Job, outcome: "ok" | "failed"): Promise<boolean>;
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
