// The job model: what a job is, the wire shapes of its results. Knows nothing of CLI, MCP or backends.
import type { BackendId, BackendName } from "./backend-id.ts";

export type { BackendId, BackendName };

export const ACTIVE_STATES = ["queued", "starting", "running", "stalled"] as const;
export const TERMINAL_STATES = ["succeeded", "failed", "cancelled", "timed_out", "lost"] as const;
export type ActiveState = (typeof ACTIVE_STATES)[number];
export type TerminalState = (typeof TERMINAL_STATES)[number];
export type JobState = ActiveState | TerminalState;
export const JOB_STATES: readonly JobState[] = [...ACTIVE_STATES, ...TERMINAL_STATES];

/** A process on some machine, identified well enough to tell that it is gone (PID reuse and reboots included). */
export interface LaunchOwner {
  pid: number;
  /** The process's start time (clock ticks since boot), when readable: a reused PID has another one. */
  start: string | null;
  boot: string | null;
  host: string;
  /** When it reserved or claimed the launch (the launch grace counts from here). */
  at: string;
}

/** A dependency's condition on its parent's end: ok = succeeded, failed = any other end, any = ended. */
export type AfterCondition = "ok" | "any" | "failed";

/** One parent of a job (`--after JOB:ON`, src/core/dependencies/dependency-rules.ts). */
export interface Dependency {
  job_id: string;
  on: AfterCondition;
}

/** What ends a retry covers (src/core/retries/retry-policy.ts): lost; infrastructure = lost, a failed launch or node; exit = a failing command. */
export type RetryClass = "lost" | "infrastructure" | "exit";

/** `--retries N --retry-on …`: up to `retries` more attempts after an end of one of `on`, `backoff_seconds` doubling. */
export interface RetryPolicy {
  retries: number;
  on: RetryClass[];
  backoff_seconds: number;
}

/** Everything that affects a launch. Secret values are never part of it: only their names. */
export interface JobSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  secret_env: string[];
  backend: BackendName;
  host: string | null;
  queue: string | null;
  /** Resource locks (NAME=VALUE, sorted, unique) held while the command runs; absent when none. */
  resources?: string[];
  timeout_seconds: number | null;
  stall_timeout_seconds: number | null;
  artifacts: string[];
  slurm_options: Record<string, string>;
  name: string | null;
  /** Local jobs: the job's files live in LOG_DIR/<job_id> instead of the data directory; absent when not given. */
  log_dir?: string;
  /** Parents that must end (as each says) before the command starts, on the same target; absent when none. */
  after?: Dependency[];
  /** Retries of this job on the ends the policy names; absent when none. */
  retry?: RetryPolicy;
  /** What the command leaves running when it ends by itself is kept (a later cancel stops it); absent when not. */
  keep_leftovers?: true;
}

export interface Job {
  job_id: string;
  name: string | null;
  backend: BackendName;
  host: string | null;
  state: JobState;
  spec: JobSpec;
  fingerprint: string;
  client_request_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  job_dir: string;
  backend_id: BackendId | null;
  status_message: string | null;
  cancel_requested_at: string | null;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  /** The process that reserved (or last claimed) the launch; absent on jobs from before it was recorded. */
  launcher?: LaunchOwner | null;
  /** Which attempt the job row now describes (1 unless retried; src/core/retries/retry-policy.ts). */
  attempt?: number;
  /** A retried job waiting for its next attempt: not launched before this time. */
  retry_at?: string | null;
}

export interface ErrorInfo {
  stage: string;
  reason: string;
  retryable: boolean;
  suggestion: string;
  detail?: string;
  [key: string]: unknown;
}

export interface ArtifactEntry {
  path: string;
  declared_path: string;
  exists: boolean;
  remote: boolean;
  size_bytes?: number;
  sha256?: string;
  modified_at?: string;
  content?: unknown;
  parse_error?: string;
  reason?: string;
}

/** How a job's processes were found (src/wrapper/tracking.sh): its cgroup, or AWAITLESS_JOB_ID in their environment. */
export type Tracking = "cgroup" | "environment";

/**
 * What the job's processes left running when the command ended (docs/job-lifecycle.md, "The whole job"). Results
 * stored before it existed have none; `count`, `action` and `tracking` are null when nobody could look (the wrapper
 * was killed, the scheduler ended the job without the wrapper's record).
 */
export interface Leftovers {
  count: number | null;
  /** stopped: TERM, the grace period, KILL; kept: left running (--keep-leftovers), a later cancel stops them. */
  action: "stopped" | "kept" | null;
  /** `PID COMMAND` of the first 20, redacted. */
  processes: string[];
  /** environment: a process that cleared its environment and left the command's group and session was not seen. */
  tracking: Tracking | null;
}

/** What the job cost; each figure null when it cannot be known, `source` null when none is. */
export interface Resources {
  cpu_user_seconds: number | null;
  cpu_system_seconds: number | null;
  /** Peak memory of the job's cgroup (page cache included), or of the scheduler's accounting. */
  max_rss_bytes: number | null;
  /** Processes of the job the kernel's OOM killer ended (cgroup only). */
  oom_kills: number | null;
  /** cgroup: the job's cgroup; slurm: the scheduler's accounting; rusage: the CPU time of the command's reaped tree. */
  source: "cgroup" | "slurm" | "rusage" | null;
}

/** The terminal result (docs/protocol.md, "Terminal result"): one object on every surface. */
export interface JobResult {
  job_id: string;
  name: string | null;
  backend: BackendName;
  host: string | null;
  state: TerminalState;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string;
  duration_seconds: number | null;
  stdout_tail: string;
  stderr_tail: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_dropped_bytes: number;
  stderr_dropped_bytes: number;
  truncated: boolean;
  /** Kept for older readers: processes of the job outlived the command (`leftovers` says which, and what became of them). */
  descendants_alive: boolean;
  /** Absent from results stored before it existed. */
  leftovers?: Leftovers;
  /** Absent from results stored before it existed. */
  resources?: Resources;
  digest: string[];
  artifacts: ArtifactEntry[];
  parsed_results: unknown;
  error: ErrorInfo | null;
  snapshot: { sha256: string; captured_at: string };
  /** Jobs with retries: the attempt this result is of, and how many the job may have (1 + retries). */
  attempt?: number;
  attempts?: number;
}

export interface StateChange {
  seq: number;
  from_state: JobState | null;
  to_state: JobState;
  at: string;
  reason: string | null;
}

export function isTerminal(state: JobState): state is TerminalState {
  return (TERMINAL_STATES as readonly string[]).includes(state);
}

/** One ended attempt of a retried job (table job_attempts): its directory, how it ended, its own sealed result. */
export interface AttemptRecord {
  attempt: number;
  job_dir: string;
  backend_id: BackendId | null;
  state: JobState;
  reason: string | null;
  exit_code: number | null;
  signal: string | null;
  /** When its launch was reserved (the launcher's claim). */
  launched_at: string | null;
  started_at: string | null;
  finished_at: string;
  result_json: string;
  result_sha256: string;
}
