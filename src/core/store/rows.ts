// The store's row shapes and the pure mapping from a jobs row to a StoredJob (no database access here).
import { parseBackendId } from "../model/backend-id.ts";
import type { BackendId, Job, JobSpec, JobState, StateChange } from "../model/job.ts";
import type { LaunchOwner } from "../rules/launch-owner.ts";

export interface JobRow {
  job_id: string;
  name: string | null;
  backend: string;
  host: string | null;
  queue: string | null;
  state: string;
  spec_json: string;
  fingerprint: string;
  client_request_id: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  job_dir: string;
  backend_id_json: string | null;
  status_message: string | null;
  cancel_requested_at: string | null;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  stdout_bytes: number | null;
  stderr_bytes: number | null;
  result_json: string | null;
  launcher_json?: string | null;
  attempt?: number;
  retry_at?: string | null;
}

export interface StoredJob extends Job {
  queue: string | null;
  stdout_bytes: number | null;
  stderr_bytes: number | null;
  /** The terminal result snapshot exactly as stored (replayed byte-identically). */
  result_json: string | null;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isTextMap = (v: unknown): v is Record<string, string> =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  Object.values(v).every((x) => typeof x === "string");

/**
 * A stored spec as the readers use it. Every row this version writes has this shape; a row that does not (imported
 * by an earlier version from a damaged or hostile 0.8 store) gets the fields that are not of their type emptied
 * (a command that is not a list of strings shows as none), so one such row never breaks a listing of the store.
 */
export function storedSpec(json: string): JobSpec {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    v = {};
  }
  const s = (typeof v === "object" && v !== null && !Array.isArray(v) ? v : {}) as Record<string, unknown>;
  const text = (x: unknown) => (typeof x === "string" ? x : null);
  return {
    ...(s as unknown as JobSpec),
    argv: isStrings(s.argv) ? s.argv : [],
    cwd: text(s.cwd) ?? "",
    env: isTextMap(s.env) ? s.env : {},
    secret_env: isStrings(s.secret_env) ? s.secret_env : [],
    host: text(s.host),
    queue: text(s.queue),
    artifacts: isStrings(s.artifacts) ? s.artifacts : [],
    slurm_options: isTextMap(s.slurm_options) ? s.slurm_options : {},
    name: text(s.name),
  };
}

export function rowToJob(r: JobRow): StoredJob {
  return {
    job_id: r.job_id,
    name: r.name,
    backend: r.backend as Job["backend"],
    host: r.host,
    queue: r.queue,
    state: r.state as JobState,
    spec: storedSpec(r.spec_json),
    fingerprint: r.fingerprint,
    client_request_id: r.client_request_id,
    created_at: r.created_at,
    started_at: r.started_at,
    finished_at: r.finished_at,
    job_dir: r.job_dir,
    backend_id: r.backend_id_json ? parseBackendId(r.backend, r.backend_id_json, r.job_id) : null,
    status_message: r.status_message,
    cancel_requested_at: r.cancel_requested_at,
    exit_code: r.exit_code,
    signal: r.signal,
    reason: r.reason,
    stdout_bytes: r.stdout_bytes,
    stderr_bytes: r.stderr_bytes,
    result_json: r.result_json,
    launcher: r.launcher_json ? (JSON.parse(r.launcher_json) as LaunchOwner) : null,
    ...(r.attempt !== undefined && r.attempt > 1 ? { attempt: r.attempt } : {}),
    ...(r.retry_at ? { retry_at: r.retry_at } : {}),
  };
}

export interface NewJob {
  job_id: string;
  state: "queued" | "starting";
  spec: JobSpec;
  fingerprint: string;
  client_request_id: string | null;
  active_key: string;
  created_at: string;
  job_dir: string;
  /** The reserving process (recorded so that a retry can tell when its launch was abandoned). */
  launcher?: LaunchOwner;
}

export type Reservation =
  | { kind: "created"; job: StoredJob }
  | { kind: "replay"; job: StoredJob }
  | { kind: "conflict"; job: StoredJob }
  | { kind: "duplicate"; job: StoredJob };

export interface TerminalWrite {
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  finished_at: string;
  stdout_bytes: number;
  stderr_bytes: number;
  result_json: string;
  result_sha256: string;
}

export interface TransitionPatch {
  status_message?: string | null;
  started_at?: string;
  backend_id?: BackendId;
  terminal?: TerminalWrite;
  historyReason?: string | null;
}

export interface ListFilter {
  states?: readonly JobState[];
  name?: string;
  host?: string;
  queue?: string;
  /** Leave array tasks out (the dashboard lists each array as one entry): an indexed NOT IN on job_array_tasks. */
  withoutArrayTasks?: boolean;
  limit: number;
}

/** A finished job brought from another store (Awaitless 0.8), with its own history. */
export interface ImportedJob {
  job_id: string;
  /** Terminal, or active for a job another program still runs (watched until it records its end). */
  state: JobState;
  spec: JobSpec;
  fingerprint: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  job_dir: string;
  backend_id: BackendId;
  status_message?: string | null;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  stdout_bytes: number | null;
  stderr_bytes: number | null;
  result_json: string | null;
  result_sha256: string | null;
  history: Omit<StateChange, "seq">[];
}
