// What each kind of job stores as its backend_id: one type per backend, checked once where the store reads a row.
import { AwaitlessError } from "./errors.ts";

/** The backends a job can run on (the wire word of every job). */
export type BackendName = "local" | "ssh" | "slurm";

/** A job a wrapper runs on a host (the local and ssh backends): the wrapper's process, and its directory there. */
export type HostBackendId = {
  wrapper_pid: number;
  /** The wrapper's start time (/proc), so a reused PID is not taken for it. */
  proc_start?: string;
  boot_id?: string;
  /** ssh: the job's directory on the host (job_dir is only a local copy of its spec). */
  remote_dir?: string;
  /** ssh: the host's shell that runs the wrapper. */
  remote_shell?: string;
};

/** A Slurm job: every field may be missing (an ID adopted by tag after a lost sbatch reply is stored alone). */
export type SlurmBackendId = {
  slurm_job_id?: string;
  /** The job's directory on the cluster. */
  remote_dir?: string;
  cwd?: string;
  submitted_at?: string;
  /** Found by its tag (sbatch's reply was lost). */
  adopted?: boolean;
  /** Why sbatch's reply was lost. */
  submit_unconfirmed?: string;
  /** Since when the job is out of squeue with no final sacct line (the accounting grace started then). */
  unsettled_since?: string;
  /** How its end was observed: "watch" (the event path) or "poll". */
  completion?: "watch" | "poll";
  /** Submitted with --hold for a :failed/:any parent with retries; a client releases it (heldChildNow). */
  held?: boolean;
  /** A task of an array: its chunk's Slurm job ID (scancel of the whole chunk). */
  array_job_id?: string;
  /** A task of an array: its chunk's tag and its Slurm task ID (find-by-tag finds `ID_<array_task>`). */
  array_tag?: string;
  array_task?: number;
};

/** An ended job imported from Awaitless 0.8: its result is sealed here, its logs a local copy (any backend). */
export type Imported08BackendId = {
  imported_from: string;
  /** 0.8's database the row came from (every import writes it; a row planted by hand may lack it). */
  source?: string;
  /** Whether the logs were copied. */
  logs?: string;
  pid?: number;
  pgid?: number;
  backend_id_08?: string;
  queue_08?: string;
};

/** A local job Awaitless 0.8 still runs, imported to be watched through 0.8's records until it ends. */
export type Watched08BackendId = {
  imported_from: string;
  watch: true;
  /** 0.8's data directory. */
  source_dir: string;
  stdout_08: string;
  stderr_08: string;
  pid?: number;
  pid_start_ticks?: number | null;
  runner_pid?: number;
  runner_start_ticks?: number | null;
};

/** A job's stored backend_id, of the type its backend (and an Awaitless 0.8 import) writes. */
export type BackendId = HostBackendId | SlurmBackendId | Imported08BackendId | Watched08BackendId;

/** A job's backend and its backend_id: what the accessors below read. */
export interface BackendRef {
  backend: BackendName;
  backend_id?: BackendId | null;
}

type Check = (o: Record<string, unknown>, key: string) => string | null;

const isString: Check = (o, k) => (typeof o[k] === "string" ? null : "a string");
const isNumber: Check = (o, k) => (typeof o[k] === "number" && Number.isFinite(o[k]) ? null : "a number");
const isBoolean: Check = (o, k) => (typeof o[k] === "boolean" ? null : "true or false");
const isTrue: Check = (o, k) => (o[k] === true ? null : "true");
const isCompletion: Check = (o, k) => (o[k] === "watch" || o[k] === "poll" ? null : '"watch" or "poll"');
const numberOrNull: Check = (o, k) => (o[k] === null ? null : isNumber(o, k));

/** Each known field: its check, and whether it must be there. Fields not listed are kept as they are. */
type Shape = Record<string, [Check, "required" | "optional"]>;

const HOST: Shape = {
  wrapper_pid: [isNumber, "required"],
  proc_start: [isString, "optional"],
  boot_id: [isString, "optional"],
  remote_dir: [isString, "optional"],
  remote_shell: [isString, "optional"],
};

const SLURM: Shape = {
  slurm_job_id: [isString, "optional"],
  remote_dir: [isString, "optional"],
  cwd: [isString, "optional"],
  submitted_at: [isString, "optional"],
  adopted: [isBoolean, "optional"],
  submit_unconfirmed: [isString, "optional"],
  unsettled_since: [isString, "optional"],
  completion: [isCompletion, "optional"],
  held: [isBoolean, "optional"],
  array_job_id: [isString, "optional"],
  array_tag: [isString, "optional"],
  array_task: [isNumber, "optional"],
};

const IMPORTED: Shape = {
  imported_from: [isString, "required"],
  source: [isString, "optional"],
  logs: [isString, "optional"],
  pid: [isNumber, "optional"],
  pgid: [isNumber, "optional"],
  backend_id_08: [isString, "optional"],
  queue_08: [isString, "optional"],
};

const WATCHED: Shape = {
  imported_from: [isString, "required"],
  watch: [isTrue, "required"],
  source_dir: [isString, "required"],
  stdout_08: [isString, "required"],
  stderr_08: [isString, "required"],
  pid: [isNumber, "optional"],
  pid_start_ticks: [numberOrNull, "optional"],
  runner_pid: [isNumber, "optional"],
  runner_start_ticks: [numberOrNull, "optional"],
};

/** What is wrong with `o` as `shape` (the first field that does not fit), or null when it fits. */
function misfit(o: Record<string, unknown>, shape: Shape): string | null {
  for (const [key, [check, need]] of Object.entries(shape)) {
    if (!(key in o)) {
      if (need === "required") return `it has no ${key}`;
      continue;
    }
    const want = check(o, key);
    if (want) return `its ${key} is ${JSON.stringify(o[key])}, not ${want}`;
  }
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isImported(o: Record<string, unknown>): o is Imported08BackendId {
  return "imported_from" in o && !("watch" in o) && misfit(o, IMPORTED) === null;
}

function isWatched(o: Record<string, unknown>): o is Watched08BackendId {
  return "imported_from" in o && "watch" in o && misfit(o, WATCHED) === null;
}

function isHostId(o: Record<string, unknown>): o is HostBackendId {
  return !("imported_from" in o) && misfit(o, HOST) === null;
}

function isSlurmId(o: Record<string, unknown>): o is SlurmBackendId {
  return !("imported_from" in o) && !("wrapper_pid" in o) && misfit(o, SLURM) === null;
}

/** The shape a backend's jobs store (an Awaitless 0.8 import aside), keyed by the job's backend column. */
const OWN: Record<
  BackendName,
  { shape: Shape; is: (o: Record<string, unknown>) => o is HostBackendId | SlurmBackendId }
> = {
  local: { shape: HOST, is: isHostId },
  ssh: { shape: HOST, is: isHostId },
  slurm: { shape: SLURM, is: isSlurmId },
};

/**
 * A stored backend_id (its JSON text) read as the type its job's backend writes: an Awaitless 0.8 import by its
 * `imported_from` (`watch`: still run by 0.8), any other by the job's backend. The object is the parsed JSON itself
 * (fields it does not know are kept, so it is written back as it was). One that fits no type is refused.
 */
export function parseBackendId(backend: string, json: string, jobId: string): BackendId {
  let o: unknown;
  try {
    o = JSON.parse(json);
  } catch (e) {
    throw malformed(jobId, backend, `it is not JSON (${(e as Error).message})`);
  }
  if (!isObject(o)) throw malformed(jobId, backend, `it is ${JSON.stringify(o)}, not an object`);
  if ("imported_from" in o) {
    if (isWatched(o) || isImported(o)) return o;
    throw malformed(jobId, backend, misfit(o, "watch" in o ? WATCHED : IMPORTED) ?? "");
  }
  const own = Object.hasOwn(OWN, backend) ? OWN[backend as BackendName] : undefined;
  if (!own)
    throw malformed(
      jobId,
      backend,
      `the job's backend ${JSON.stringify(backend)} is not one this build knows`,
    );
  if (own.is(o)) return o;
  throw malformed(
    jobId,
    backend,
    misfit(o, own.shape) ?? "it has wrapper_pid, which only a job a wrapper runs on a host has",
  );
}

function malformed(jobId: string, backend: string, why: string): AwaitlessError {
  return new AwaitlessError(
    "internal",
    `the stored backend_id of job ${jobId} (backend ${backend}) is malformed: ${why}`,
    "the data directory's awaitless.db was changed by something else; restore it from a backup, or remove the job",
  );
}

/** A job Awaitless 0.8 still runs (imported to be watched), or null. */
export function watched08Of(job: BackendRef): Watched08BackendId | null {
  const id = job.backend_id;
  return id && "watch" in id ? id : null;
}

/** An ended job imported from Awaitless 0.8 (or one it still runs), or null. */
export function imported08Of(job: BackendRef): Imported08BackendId | Watched08BackendId | null {
  const id = job.backend_id;
  return id && "imported_from" in id ? id : null;
}

/** The backend_id of a job a wrapper runs on a host (its own, not an Awaitless 0.8 import's), or null. */
export function hostIdOf(job: BackendRef): HostBackendId | null {
  const id = job.backend_id;
  return id && !("imported_from" in id) && "wrapper_pid" in id ? id : null;
}

/** The backend_id of a Slurm job (its own, not an Awaitless 0.8 import's), or null. */
export function slurmIdOf(job: BackendRef): SlurmBackendId | null {
  const id = job.backend_id;
  return id && !("imported_from" in id) && !("wrapper_pid" in id) ? id : null;
}

/** The job's directory on its target, when its backend_id names one (ssh and Slurm jobs). */
export function remoteDirOf(id: BackendId | null | undefined): string | undefined {
  return id && !("imported_from" in id) ? id.remote_dir : undefined;
}

/** The scheduler's job ID of a job a scheduler runs, once known. */
export function schedulerJobIdOf(id: BackendId | null | undefined): string | undefined {
  return id && !("imported_from" in id) && !("wrapper_pid" in id) ? id.slurm_job_id : undefined;
}

/** The job was submitted held by its scheduler (a child a client releases once its parent's last attempt ends). */
export function heldOf(id: BackendId | null | undefined): boolean {
  return id != null && !("imported_from" in id) && !("wrapper_pid" in id) && id.held === true;
}

/** The PID of the job's wrapper, once its launch answered (a wrapper run on a host). */
export function wrapperPidOf(id: BackendId | null | undefined): number | undefined {
  return id && !("imported_from" in id) && "wrapper_pid" in id ? id.wrapper_pid : undefined;
}
