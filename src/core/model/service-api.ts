// Request and response shapes of the job use cases shared by the CLI and MCP (the field names of docs/protocol.md).

import type {
  ArrayCancelResponse,
  ArrayEntry,
  ArrayListFilter,
  ArrayProgress,
  ArraySubmitResponse,
  ArrayTaskView,
  ArrayView,
  ArrayWaitResponse,
} from "./array-views.ts";
import type { AwaitlessError } from "./errors.ts";
import type {
  AttemptRecord,
  BackendName,
  JobResult,
  JobState,
  Leftovers,
  Resources,
  StateChange,
} from "./job.ts";

export interface LaunchRequest {
  argv: string[];
  cwd?: string;
  env?: Record<string, string>;
  secret_env?: string[];
  backend?: BackendName;
  host?: string;
  queue?: string;
  /** Resource locks, each NAME=VALUE (e.g. gpu=0): the job starts only while no other job holds any of them. */
  resources?: string[];
  timeout_seconds?: number;
  stall_timeout_seconds?: number;
  artifacts?: string[];
  slurm_options?: Record<string, string>;
  name?: string;
  /** Parents, each "JOB_ID[:ok|any|failed]": the job is held until each ended so (src/core/dependencies/dependency-rules.ts). */
  after?: string[];
  /** Up to this many more attempts after an end `retry_on` names (src/core/retries/retry-policy.ts); 0 or absent: none. */
  retries?: number;
  /** Which ends are retried: lost, infrastructure (lost, a failed launch, a node failure; the default), exit (a failing command). */
  retry_on?: string[];
  /** Seconds before the first retry (default 10), doubling for each later one. */
  retry_backoff_seconds?: number;
  /** Local backend: keep this job's files (logs, records, spec) in LOG_DIR/<job_id>. */
  log_dir?: string;
  /** Keep what the command leaves running when it ends (local and SSH); default from the config, else false. */
  keep_leftovers?: boolean;
  client_request_id?: string;
  allow_duplicate?: boolean;
  /** Values for secret_env names; taken from the caller's environment when absent. */
  secret_values?: Record<string, string>;
}

/** A short status view of any job (active or terminal). */
export interface JobStatus {
  job_id: string;
  name: string | null;
  backend: BackendName;
  host: string | null;
  queue: string | null;
  state: JobState;
  status_message: string | null;
  argv: string[];
  cwd: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Seconds the command ran (or, not started yet, has waited); absent when a finished job never started. */
  elapsed_seconds?: number;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  stdout_bytes: number;
  stderr_bytes: number;
  last_output_at: string | null;
  client_request_id: string | null;
  backend_id: Record<string, unknown> | null;
  /** Its dependencies (--after), each JOB_ID:ok|any|failed; absent when none. */
  after?: string[];
  /** Jobs with retries: the attempt shown (1, 2, …) and how many the job may have (1 + retries); absent without. */
  attempt?: number;
  attempts?: number;
  /** While a retry waits out its backoff: when that attempt starts (status_message says so, and how the last ended). */
  next_attempt_at?: string;
  /** Set when the job's host could not be reached just now: the state shown is the last known one. */
  host_unreachable?: string;
  /** `status` of an ended job: what its processes left running and what it cost (as its result says). */
  leftovers?: Leftovers;
  resources?: Resources;
}

export interface SubmitResponse {
  job_id: string;
  state: JobState;
  backend: BackendName;
  idempotent_replay: boolean;
  /** A retry finished the launch its creating client abandoned (that client died before starting the wrapper). */
  launch_resumed?: true;
  job: JobStatus;
}

export type WaitState = "complete" | "client_timeout";
export type DeliveryState = "delivered" | "pending";

/** The envelope of a wait-like answer: how the wait went, beside the result's own fields (docs/protocol.md, "Waiting and delivery"). */
export interface WaitEnvelope {
  job_id: string;
  job_state: JobState;
  wait_state: WaitState;
  delivery_state: DeliveryState;
  /** How long this job has been waited on, across every wait that ended so far (stored). */
  waited_seconds: number;
  status_message?: string;
  /** While a retry waits out its backoff: when that attempt starts (as in JobStatus). */
  next_attempt_at?: string;
  /** Set when the wait ended because the job's host cannot be reached (the job keeps its state). */
  host_unreachable?: string;
  next_action?: string;
  next_command?: string;
}

/**
 * The result fields known while a job is still active: who and where, and (when its host answers) the tails so far;
 * the others are absent until it ends.
 */
export type PendingResultFields = Partial<Omit<JobResult, "state">> &
  Pick<JobResult, "name" | "backend" | "host" | "created_at" | "started_at"> & { state: JobState };

/**
 * A wait-like answer, flat: the terminal result's fields at the top level (the stored snapshot, replayed
 * byte-identically) with the envelope beside them; while pending, the result fields known so far.
 */
export type WaitResponse = WaitEnvelope &
  (
    | ({ delivery_state: "delivered"; wait_state: "complete" } & JobResult)
    | ({ delivery_state: "pending"; wait_state: "client_timeout" } & PendingResultFields)
  );

/** The wait answer of a finished job, whose fields are the whole terminal result. */
export type DeliveredWait = Extract<WaitResponse, { delivery_state: "delivered" }>;

export function isDelivered(w: WaitResponse): w is DeliveredWait {
  return w.delivery_state === "delivered";
}

/** The fields a wait-like answer (a wait, a run) adds beside the result's; snapshot.sha256 covers none of them. */
export const ENVELOPE_FIELDS = [
  "job_state",
  "wait_state",
  "delivery_state",
  "waited_seconds",
  "status_message",
  "next_attempt_at",
  "host_unreachable",
  "next_action",
  "next_command",
  "delivery",
  "detach_reason",
  "idempotent_replay",
  "launch_resumed",
] as const;

/** The fields a run adds after the wait's envelope. */
const RUN_FIELDS: readonly string[] = ["delivery", "detach_reason", "idempotent_replay", "launch_resumed"];

/**
 * A pending answer with a surface's next step (each surface words it: the CLI a command, MCP a tool call), placed
 * after the envelope and before a run's own fields, where every answer has carried it.
 */
export function withNext<T extends WaitResponse>(
  w: T,
  next: { next_action?: string; next_command?: string },
): T {
  const entries = Object.entries(w).filter(([k]) => k !== "next_action" && k !== "next_command");
  const at = entries.findIndex(([k]) => RUN_FIELDS.includes(k));
  const added = Object.entries(next).filter(([, v]) => v !== undefined);
  entries.splice(at < 0 ? entries.length : at, 0, ...added);
  return Object.fromEntries(entries) as T;
}

/** The terminal result inside a delivered answer: its fields without the envelope. */
export function terminalResult(w: DeliveredWait): JobResult {
  const out: Record<string, unknown> = { ...w };
  for (const key of ENVELOPE_FIELDS) delete out[key];
  return out as unknown as JobResult;
}

export type RunResponse = WaitResponse & {
  delivery: "inline" | "detached";
  detach_reason?: "inline_timeout" | "queued";
  idempotent_replay: boolean;
  launch_resumed?: true;
};

export interface CompletionItem {
  completion_id: string;
  job_id: string;
  state: JobState;
  finished_at: string;
  observed_at: string;
  result: JobResult;
}

export interface CompletionsResponse {
  completions: CompletionItem[];
  next_cursor: string;
  active_job_ids: string[];
  unreachable_job_ids: string[];
  has_more: boolean;
  wait_timed_out: boolean;
}

export interface LogsRequest {
  job_id: string;
  stream?: "stdout" | "stderr" | "both";
  /** The last N lines (or matches). */
  tail_lines?: number;
  /** The first N lines (or matches) from from_line (default 1). */
  head?: number;
  /** Only lines from this one on (1-based, in the retained log). */
  from_line?: number;
  /** Only lines up to this one. */
  to_line?: number;
  /** Only lines matching this POSIX extended regular expression (docs/cli.md), scanned over the whole log. */
  grep?: string;
  /** grep matches either case of each ASCII letter (as `grep -i` in the C locale). */
  ignore_case?: boolean;
  /** Bytes of returned text, both streams together. */
  max_bytes?: number;
}

export interface LogsResponse {
  job_id: string;
  job_state: JobState;
  stdout?: string;
  stderr?: string;
  stdout_bytes: number;
  stderr_bytes: number;
  dropped_bytes: { stdout: number; stderr: number };
  /** Something was left out of a returned stream (its page's left_out says what). */
  truncated: boolean;
  /** Per returned stream: line numbers, totals, cursors to read on, what was left out. */
  stdout_page?: Omit<LogPage, "text">;
  stderr_page?: Omit<LogPage, "text">;
}

export interface CancelResponse {
  job_id: string;
  job_state: JobState;
  cancel_requested: boolean;
  /** Already terminal before the request: nothing was signalled. */
  already_terminal: boolean;
  result?: JobResult;
  /** A job lost with its wrapper killed: what cancel did about its command's group (the job stays lost). */
  leftover?: LeftoverStop;
}

export interface ListRequest {
  /** `pending` (Awaitless 0.8's word) lists `queued` jobs. */
  state?: JobState | "active" | "terminal" | "pending";
  name?: string;
  host?: string;
  queue?: string;
  limit?: number;
  /** Leave array tasks out (the dashboard shows each array as one entry, from ArrayApi.list). */
  without_array_tasks?: boolean;
}

export interface InspectResponse {
  job: JobStatus;
  spec: Record<string, unknown>;
  history: StateChange[];
  job_dir: string;
  /** Jobs that wait for (or waited for) this one (--after), each JOB_ID:ok|any|failed; absent when none. */
  dependents?: string[];
  /** Jobs with retries: each ended earlier attempt (its directory, end and own result); the job is the current one. */
  attempt_history?: AttemptView[];
  /** How the job's end is (or was) observed, where the backend says (Slurm: watch of the job directory or polling). */
  completion?: string;
  result?: JobResult;
}

/** One earlier attempt of a retried job, as `inspect` shows it: its stored record, the result parsed. */
export type AttemptView = Omit<AttemptRecord, "backend_id" | "result_json" | "result_sha256"> & {
  result: JobResult;
};

/** Progress callback for held waits: called at least every `intervalMs` with a human sentence. */
export type ProgressFn = (message: string) => void;

export interface WaitOptions {
  timeoutMs: number | null;
  /** An internal wait (a watcher, cancel's own wait): not counted in waited_seconds. */
  untracked?: boolean;
  signal?: AbortSignal;
  onProgress?: ProgressFn;
  progressIntervalMs?: number;
  /**
   * Told, when the wait ends pending, how long the job has made no output (since its start while it has written
   * none; undefined when unknown), read by the look that made the answer: no second look to offer a cancel.
   */
  onQuietSeconds?: (seconds: number | undefined) => void;
}

/** `queue create`: the queue as stored (created: false when it already existed with the same concurrency). */
export interface QueueCreated {
  name: string;
  target: string;
  concurrency: number;
  created: boolean;
}

/** `queue set`: the queue with its new concurrency, the one it had, and how many jobs in line keep that. */
export interface QueueChanged {
  name: string;
  target: string;
  concurrency: number;
  previous_concurrency: number;
  waiting_with_previous: number;
}

/** A waiting job of a queue, in FIFO order (position 1 = next). */
export interface QueuedJobView {
  job_id: string;
  position: number;
}

/** `queue list`: one queue on one target. */
export interface QueueView {
  name: string;
  /** A job array's private queue (`array.<ARRAY_ID>`): that array's ID; absent for named queues. */
  array_id?: string;
  /** "local" or the host name. */
  target: string;
  concurrency: number;
  running: number;
  queued: number;
  running_job_ids: string[];
  waiting: QueuedJobView[];
  /** Mean runtime of the queue's last finished jobs; null without history. */
  mean_runtime_seconds: number | null;
  /** Estimated time until the last waiting job starts; null without history or when nothing waits. */
  eta_seconds: number | null;
  created_at: string;
}

/** `queue list`: the queues, and how many private queues of active job arrays were left out (0 with `arrays`). */
export interface QueueListing {
  queues: QueueView[];
  hidden_array_queues: number;
}

export interface JobServiceApi {
  /** Warnings about observations a full disk kept out of the store (each said once). */
  storeNotices(): string[];
  submit(req: LaunchRequest): Promise<SubmitResponse>;
  /** Job arrays over this service (core/arrays/array-service.ts); absent in services without them. */
  readonly arrays?: ArrayApi;
  run(
    req: LaunchRequest,
    inlineTimeoutMs: number,
    opts?: Omit<WaitOptions, "timeoutMs">,
  ): Promise<RunResponse>;
  wait(jobId: string, opts: WaitOptions): Promise<WaitResponse>;
  completions(
    jobIds: string[],
    opts: { after_cursor?: string; limit?: number } & WaitOptions,
  ): Promise<CompletionsResponse>;
  status(jobId: string): Promise<JobStatus>;
  logs(req: LogsRequest): Promise<LogsResponse>;
  cancel(jobId: string, gracePeriodSeconds?: number): Promise<CancelResponse>;
  list(req: ListRequest): Promise<JobStatus[]>;
  inspect(jobId: string): Promise<InspectResponse>;
  /**
   * Submits a new job with the stored spec of `jobId` (argv, cwd, env, target, limits, name, dependencies); secret
   * values are read again from this process's environment, as any submit does. `awaitless ui`'s "submit again".
   * An array task's comes back as a standalone job: its AWAITLESS_ARRAY_* env kept, out of the array's queue.
   */
  submitAgain(jobId: string): Promise<SubmitResponse>;
  /**
   * Resolves on the next change of any of these jobs' lifecycle files (each backend's event-driven watch: inotify,
   * the SSH watch channel, the shared Slurm poller), after `timeoutMs`, or when `signal` aborts; finished or
   * unknown IDs are skipped. A live view's wait between two listings (`awaitless ui`).
   */
  waitForAnyChange(jobIds: string[], timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /** Resolves when the job reaches a terminal state (or the signal aborts). */
  onTerminal(jobId: string, signal: AbortSignal): Promise<JobState>;
  /** Named queues: create one, list them with what runs and waits. */
  createQueue(name: string, concurrency: number, host?: string): Promise<QueueCreated>;
  /** A queue's new concurrency (for jobs launched from now on; `waiting`: jobs in line that keep the old one). */
  setQueue(name: string, concurrency: number, host?: string): Promise<QueueChanged>;
  /** Removes a queue no unfinished job uses. */
  deleteQueue(name: string, host?: string): Promise<{ name: string; target: string; deleted: true }>;
  /** Active job arrays' private queues (`array.<ARRAY_ID>`) are counted, and listed only with `arrays`. */
  listQueues(host?: string, opts?: { arrays?: boolean }): Promise<QueueListing>;
  /** The listing with how many jobs match in all (`20 of 30 shown`). */
  listPage(req: ListRequest): Promise<{ jobs: JobStatus[]; total: number }>;
  /** A full job ID, or a unique prefix of one (the CLI's job arguments, as git's); MCP takes full IDs only. */
  resolveJobId(text: string): string;
  /** The stored terminal result's bytes (replayed byte-identically); null while the job is active. */
  resultJson(jobId: string): string | null;
  /** Every new line of a job's streams as it comes (redacted), until the job ends or `signal` aborts. */
  followLogs(
    jobId: string,
    stream: "stdout" | "stderr" | "both",
    signal?: AbortSignal,
  ): AsyncIterable<FollowEvent>;
  /** Removes finished jobs (files, then rows) by age, count and store quota; active jobs are never touched. */
  gc(o: GcOptions): Promise<GcResult>;
}

/** `gc`: what to remove. */
export interface GcOptions {
  olderThanSeconds: number | null;
  keep: number | null;
  maxBytes?: number | null;
  dryRun: boolean;
  /** Remove rows and local copies even when the host's copy cannot be removed. */
  forgetUnreachable?: boolean;
}

/**
 * What gc removed (or would remove), and the store's size against its quota when one applies; with dryRun,
 * `dry_run: true` and what it would remove instead (never `removed`).
 */
export type GcResult = GcRemoved | GcDryRun;

export interface GcQuota {
  /** Bytes of every job directory on this machine after gc (with dryRun: what would remain). */
  store_bytes?: number;
  quota_bytes?: number;
  /** Active jobs alone use more than the quota: gc cannot get under it. */
  over_quota?: boolean;
}

export interface GcDryRun extends GcQuota {
  dry_run: true;
  would_remove: string[];
}

export interface GcRemoved extends GcQuota {
  removed: string[];
  /** Finished jobs whose files could not be removed (their host is unreachable): kept for the next gc. */
  kept?: { job_id: string; reason: string }[];
  /** With forgetUnreachable: jobs removed here although their host's copy could not be (it stays there). */
  forgotten?: { job_id: string; host: string | null; reason: string }[];
  /** Jobs whose row named a path that is not their own directory: forgotten, and nothing there was touched. */
  left?: { job_id: string; reason: string }[];
}

/** One event of `followLogs`: new text of a stream, then how the follow ended. */
export type FollowEvent =
  | { kind: "text"; stream: "stdout" | "stderr"; text: string }
  /** The job ended: every line was given; `result` is its terminal result. */
  | {
      kind: "ended";
      job_id: string;
      state: JobState;
      exit_code: number | null;
      signal: string | null;
      reason: string | null;
      finished_at: string | null;
      result?: JobResult;
    }
  /** The follow was stopped (its signal aborted) while the job is still active; the job keeps running. */
  | { kind: "stopped"; job_id: string; state: JobState };

export type { AwaitlessError };

/** Job arrays: an array's tasks are jobs of the service; its ID (shaped like a job ID) is the array's own. */
export interface ArrayApi {
  isArray(id: string): boolean;
  /** `ARRAY_ID.INDEX` → that task's job ID; an array's ID or unique prefix → the array; else a job ID or prefix. */
  resolve(text: string): { kind: "array" | "job"; id: string };
  submit(req: LaunchRequest, array: string): Promise<ArraySubmitResponse>;
  status(arrayId: string): Promise<ArrayView & { task_list: ArrayTaskView[] }>;
  wait(arrayId: string, opts: WaitOptions): Promise<ArrayWaitResponse>;
  cancel(arrayId: string, gracePeriodSeconds?: number): Promise<ArrayCancelResponse>;
  /** An array's task job IDs (the completion feed of the array), or the ID itself for a job. */
  expand(id: string): string[];
  /** The feed's IDs with each array's replaced by its tasks'; more than `max` in all is refused, saying so. */
  expandAll(ids: string[], max: number): string[];
  /** Adds `array_task` (ARRAY_ID.INDEX) to the statuses of array tasks. */
  annotate<T extends JobStatus>(statuses: T[]): (T & { array_task?: string })[];
  /** How far each array these jobs are tasks of has got (a listing's `arrays`); empty when none is a task. */
  progress(jobIds: string[]): ArrayProgress[];
  /** The newest arrays as listing entries, each with its progress (core/store/array-counts.ts). */
  list(filter: ArrayListFilter): ArrayEntry[];
  /** The job IDs of these arrays' tasks not ended. */
  activeTasks(arrayIds: string[]): string[];
}

/** What cancel did about a lost job's command: TERM sent now, already stopping, refused (not certainly it), none. */
export interface LeftoverStop {
  action: "signalled" | "stopping" | "refused" | "none";
  detail: string;
}

export function isLeftoverStop(x: unknown): x is LeftoverStop {
  return typeof x === "object" && x !== null && "action" in x && "detail" in x;
}

/** One stream's page as returned: the text and what was left out. */
export interface LogPage {
  text: string;
  /** Lines returned. */
  lines: number;
  first_line: number | null;
  last_line: number | null;
  lines_total?: number;
  /** With grep: lines matching in the range scanned (the whole retained log unless from_line/to_line narrow it). */
  matches_total?: number;
  /** More selected lines follow: read on from this line. */
  next_from_line?: number;
  /** Earlier selected lines exist: read back to this line. */
  next_to_line?: number;
  /** Returned lines longer than the budget, cut (marked …). */
  cut_lines?: number;
  /** The log cap dropped the middle of the stream: line numbers after `after_line` count from its marker. */
  dropped_middle?: { after_line: number; bytes: number };
  /** A plain sentence saying what was left out ("" when nothing was). */
  left_out: string;
}
