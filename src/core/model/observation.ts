// What a backend sees of a job right now: the wrapper's records (started, exit, heartbeat, place in a queue), liveness,
// and a scheduler's facts. The reconcile rules (rules/reconcile.ts) decide what they mean.
import type { Decision } from "./decision.ts";
import type { Leftovers, Resources } from "./job.ts";
import type { SchedulerFacts } from "./scheduler-facts.ts";

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
  /** An outcome another program's own records state (jobs Awaitless 0.8 still runs): taken as it is. */
  recorded?: Decision;
}
