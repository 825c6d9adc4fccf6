// What a batch scheduler (Slurm) says about one job, as facts only: src/core/rules/reconcile.ts decides what they mean.
// "Settle": the scheduler's view of a job reaching its final state (unsettled_since, patience.exit_settle_ms).

/**
 * How the scheduler says the job ended. `completed`/`failed` are the batch script's exit (0 / not 0 or a signal): the
 * wrapper's own status (0 when the command succeeded or was cancelled, else 1) says less than its exit record, so
 * `completed` alone does not give the command's exit.
 */
export type SchedulerEnd =
  | "completed"
  | "failed"
  | "cancelled"
  | "time_limit"
  | "deadline"
  | "out_of_memory"
  | "node_fail"
  | "boot_fail"
  | "preempted"
  | "revoked";

/**
 * Where the job is, as the scheduler tells: `unconfirmed` (the submission's reply was lost; looking for its tag),
 * `pending`, `running` (also completing), `interrupted` (stopped, to run again: requeued, preempted, suspended, or a
 * state Awaitless does not know), `ended`, `unknown` (out of the queue with no final accounting, or listed nowhere).
 */
export type SchedulerPhase = "unconfirmed" | "pending" | "running" | "interrupted" | "ended" | "unknown";

/** The exit the scheduler reports (the most exact source it has), signal names without SIG. */
export interface SchedulerExit {
  exit_code: number;
  signal: string | null;
}

/** The scheduler's own words for what only it knows: its settings and options, what to do about its ends. */
export interface SchedulerWords {
  /** Named in messages and, lower-cased, in the reasons of jobs it lost track of (`slurm_job_vanished`). */
  name: string;
  /** The limit a time_limit/deadline end reached, e.g. "the Slurm time limit (time=1)". */
  time_limit: string;
  /** The setting that bounds the waits for accounting (`slurm_accounting_grace`). */
  grace_setting: string;
  /** What to do, per end (those with none get a generic suggestion) and for a lost job. */
  hints: Partial<Record<SchedulerEnd, string>> & { lost: string };
  /** A job that failed before the wrapper started: what failed and what to check. */
  launch_failed: { reason: string; suggestion: string };
  /** An unconfirmed submission found nowhere: the suggestion, and why, when the launch never finished / its reply was lost. */
  not_found: { suggestion: string; never_launched: string; reply_lost: string };
}

export interface SchedulerFacts {
  /** The scheduler's ID for the job; null while the submission is unconfirmed. */
  job_id: string | null;
  phase: SchedulerPhase;
  /** The scheduler's state in a sentence (pending reason, state word, who cancelled, exit code as reported). */
  message: string;
  /** phase `ended`: how. */
  end?: SchedulerEnd;
  /** phase `ended`: the exit the scheduler reports, when it reports one. */
  exit?: SchedulerExit;
  /** phase `unknown`: the accounting lists the job without a final state (false: no one lists it). */
  listed?: boolean;
  /** phase `pending`: the scheduler says the job's dependencies can never be satisfied (a parent ended so). */
  dependency_never_satisfied?: boolean;
  /** phase `unconfirmed`: the tag search ran now and no job carries the tag. */
  not_found?: boolean;
  /** When the scheduler started and ended the job (ISO), when it says. */
  started_at?: string;
  ended_at?: string;
  /** Since when (epoch ms) the scheduler has given no final answer: phase `unknown`, or `completed` without an exit record. */
  unsettled_since_ms?: number;
  /** Since when (epoch ms) the wrapper's exit record is known (the earlier of its finished_at and its first read). */
  exit_seen_since_ms?: number;
  /** When (epoch ms) the job was submitted (phase `unconfirmed`). */
  submitted_at_ms?: number;
  /** The batch shell's stderr, for a job that ended before the wrapper started. */
  batch_stderr?: string;
  /** How long to wait: for a final accounting answer, for the scheduler's word after an exit record, for a launch. */
  patience: { accounting_grace_ms: number; exit_settle_ms: number; launch_grace_ms: number };
  words: SchedulerWords;
}
