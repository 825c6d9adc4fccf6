// The job model: what a job is, the wire shapes of its results. Knows nothing of CLI, MCP or backends.

export const ACTIVE_STATES = ["queued", "starting", "running", "stalled"] as const;
export const TERMINAL_STATES = ["succeeded", "failed", "cancelled", "timed_out", "lost"] as const;
export type ActiveState = (typeof ACTIVE_STATES)[number];
export type TerminalState = (typeof TERMINAL_STATES)[number];
export type JobState = ActiveState | TerminalState;
export const JOB_STATES: readonly JobState[] = [...ACTIVE_STATES, ...TERMINAL_STATES];

export type BackendName = "local" | "ssh" | "slurm";

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

/** One parent of a job (`--after JOB:ON`, src/core/dependencies.ts). */
export interface Dependency {
  job_id: string;
  on: AfterCondition;
}

/** What ends a retry covers (src/core/retries.ts): lost; infrastructure = lost, a failed launch or node; exit = a failing command. */
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
}

/** Backend identity, known once the wrapper started (local: pids and boot ID). */
export interface BackendId {
  wrapper_pid?: number;
  pid?: number;
  pgid?: number;
  boot_id?: string;
  proc_start?: string;
  [key: string]: unknown;
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
  /** Which attempt the job row now describes (1 unless retried; src/core/retries.ts). */
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
  descendants_alive: boolean;
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

export function isActive(state: JobState): state is ActiveState {
  return !isTerminal(state);
}
