// Validates a launch request into a JobSpec, and derives its idempotency fingerprint and duplicate key.
import { accessSync, constants, lstatSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CapabilitiesOf } from "../backend/backend.ts";
import { parseAfter } from "../dependencies/dependency-rules.ts";
import { hint, invalid } from "../model/errors.ts";
import { CLIENT_REQUEST_ID_RE } from "../model/ids.ts";
import type { BackendName, JobSpec } from "../model/job.ts";
import { QUEUE_NAME_RE, RESOURCE_RE } from "../model/queue-names.ts";
import type { LaunchRequest } from "../model/service-api.ts";
import { canonicalJson, sha256Hex } from "../results/canonical-json.ts";
import { parseRetry } from "../retries/retry-policy.ts";
import { assertTrustedDir } from "../util/trusted-dir.ts";

const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAME_MAX = 200;

export interface LaunchDefaults {
  backend: BackendName;
  host: string | null;
  /** `[hosts.NAME] backend`: how jobs sent to that host run when the request names no backend. */
  hostBackends?: Readonly<Record<string, "ssh" | "slurm">>;
  queue: string | null;
  /** `[hosts.NAME] queue`: the queue of jobs sent to that host; it wins over `queue`. */
  hostQueues?: Readonly<Record<string, string>>;
  /** `[defaults] keep_leftovers`; `[hosts.NAME] keep_leftovers` wins over it for that host. Not for Slurm jobs. */
  keepLeftovers?: boolean;
  hostKeepLeftovers?: Readonly<Record<string, boolean>>;
  cwd: string;
  /** What each backend can do (src/backends/capabilities.ts): the request is checked before its backend is built. */
  capabilitiesOf: CapabilitiesOf;
  /** The chosen backend's check of its launch options (keys canonicalized, values checked); absent → kept as given. */
  checkBackendOptions?: (backend: BackendName, raw: Record<string, string>) => Record<string, string>;
}

export interface ValidatedLaunch {
  spec: JobSpec;
  fingerprint: string;
  activeKey: string;
  clientRequestId: string | null;
  secretValues: Record<string, string>;
}

function hasNul(s: string): boolean {
  return s.includes("\0");
}

export function validateLaunch(
  req: LaunchRequest,
  defaults: LaunchDefaults,
  callerEnv: Record<string, string | undefined>,
): ValidatedLaunch {
  if (!Array.isArray(req.argv) || req.argv.length === 0 || req.argv[0] === "") {
    throw invalid("no command given", hint("give_command"));
  }
  for (const a of req.argv) {
    if (typeof a !== "string")
      throw invalid("every command argument must be a string", "pass argv as strings");
    if (hasNul(a))
      throw invalid("a command argument contains a NUL byte", "remove the NUL byte; argv cannot carry it");
  }
  const { backend, host } = resolveTarget(req, defaults);
  const can = defaults.capabilitiesOf(backend);
  // Remote jobs run relative to the login directory unless told otherwise.
  const cwdIn = req.cwd ?? (can.runsHere ? defaults.cwd : ".");
  if (hasNul(cwdIn))
    throw invalid("the working directory contains a NUL byte", "pass a valid directory path");
  const cwd = can.runsHere ? resolve(defaults.cwd, cwdIn) : cwdIn;
  if (can.runsHere) checkLocalDir(cwd);

  const env: Record<string, string> = {};
  for (const [k, val] of Object.entries(req.env ?? {})) {
    if (!ENV_NAME_RE.test(k)) {
      throw invalid(`bad environment variable name ${JSON.stringify(k)}`, hint("env_name"));
    }
    if (typeof val !== "string" || hasNul(val)) {
      throw invalid(`the value of ${k} is not a string without NUL bytes`, hint("env_value"));
    }
    env[k] = val;
  }
  const secretNames = [...new Set(req.secret_env ?? [])].sort();
  const secretValues: Record<string, string> = {};
  for (const n of secretNames) {
    if (!ENV_NAME_RE.test(n))
      throw invalid(`bad secret variable name ${JSON.stringify(n)}`, hint("secret_env_name"));
    if (n in env)
      throw invalid(`${n} is given both as a plain and as a secret variable`, hint("secret_env_once"));
    const value = req.secret_values?.[n] ?? callerEnv[n];
    if (value === undefined) {
      throw invalid(
        `secret variable ${n} is not set in this environment`,
        hint("secret_env_set", { name: n }),
      );
    }
    if (hasNul(value))
      throw invalid(`the value of ${n} contains a NUL byte`, "secrets must be plain strings");
    secretValues[n] = value;
  }
  const timeout = optionalSeconds(req.timeout_seconds, "timeout");
  const stall = optionalSeconds(req.stall_timeout_seconds, "stall timeout");
  const artifacts = [...(req.artifacts ?? [])];
  for (const a of artifacts) {
    if (typeof a !== "string" || a === "" || hasNul(a)) {
      throw invalid(`bad artifact path ${JSON.stringify(a)}`, hint("artifact_path"));
    }
  }
  const name = req.name ?? null;
  if (name !== null && (name.length === 0 || name.length > NAME_MAX || /[\0-\x1f\x7f]/.test(name))) {
    throw invalid(`bad job name ${JSON.stringify(name)}`, `use 1–${NAME_MAX} printable characters`);
  }
  // a scheduler without our named queues: the config's queue settings do not apply to its jobs
  const queue =
    req.queue ?? (can.namedQueues ? ((host && defaults.hostQueues?.[host]) ?? defaults.queue) : null);
  if (req.queue && !can.namedQueues) {
    throw invalid(
      `queue ${JSON.stringify(req.queue)} was given with the ${backend} backend`,
      hint("scheduler_no_queue"),
    );
  }
  if (queue !== null && !QUEUE_NAME_RE.test(queue)) {
    throw invalid(
      `bad queue name ${JSON.stringify(queue)}${req.queue === undefined ? " (from the config's queue setting)" : ""}`,
      "queue names are 1–64 characters from A-Z a-z 0-9 . _ -",
    );
  }
  const resources = validateResources(req.resources, backend, can.namedQueues);
  const rawSlurm = { ...(req.slurm_options ?? {}) };
  if (Object.keys(rawSlurm).length > 0 && !can.schedulesItself) {
    throw invalid("Slurm options only apply to the slurm backend", hint("scheduler_options_backend"));
  }
  // allowlisted keys in canonical form (cpus-per-task → cpus_per_task), each value checked before any side effect
  const slurmOptions = defaults.checkBackendOptions
    ? defaults.checkBackendOptions(backend, rawSlurm)
    : rawSlurm;
  const after = parseAfter(req.after);
  const retry = parseRetry(req.retries, req.retry_on, req.retry_backoff_seconds);
  const logDir =
    req.log_dir === undefined ? null : checkLogDir(req.log_dir, backend, can.runsHere, defaults.cwd);
  const keepLeftovers = keepOf(req.keep_leftovers, can.keepsLeftovers, host, defaults);
  const clientRequestId = req.client_request_id ?? null;
  if (clientRequestId !== null && !CLIENT_REQUEST_ID_RE.test(clientRequestId)) {
    throw invalid(
      `bad client_request_id ${JSON.stringify(clientRequestId)}`,
      "use 1–200 characters from A-Z a-z 0-9 . _ : @ / -",
    );
  }
  const spec: JobSpec = {
    argv: [...req.argv],
    cwd,
    env,
    secret_env: secretNames,
    backend,
    host,
    queue,
    ...(resources.length > 0 ? { resources } : {}),
    timeout_seconds: timeout,
    stall_timeout_seconds: stall,
    artifacts,
    slurm_options: slurmOptions,
    name,
    ...(logDir ? { log_dir: logDir } : {}),
    ...(after.length > 0 ? { after } : {}),
    ...(retry ? { retry } : {}),
    ...(keepLeftovers ? { keep_leftovers: true as const } : {}),
  };
  return {
    spec,
    fingerprint: sha256Hex(canonicalJson(spec)),
    activeKey: sha256Hex(canonicalJson({ argv: spec.argv, cwd, backend, host })),
    clientRequestId,
    secretValues,
  };
}

/**
 * Whether the job keeps what its command leaves running: as asked, else the host's setting, else `[defaults]`. A
 * backend that cannot keep any (Slurm ends every process of a job when its batch script ends) refuses the ask, and
 * the config's defaults do not apply to its jobs.
 */
function keepOf(
  asked: boolean | undefined,
  canKeep: boolean,
  host: string | null,
  defaults: LaunchDefaults,
): boolean {
  if (asked !== undefined && typeof asked !== "boolean")
    throw invalid("keep_leftovers must be true or false", "give keep_leftovers as a boolean");
  if (!canKeep) {
    if (asked)
      throw invalid(
        "a Slurm job cannot keep what its command leaves running",
        hint("scheduler_keep_leftovers"),
      );
    return false;
  }
  if (asked !== undefined) return asked;
  const forHost = host !== null && Object.hasOwn(defaults.hostKeepLeftovers ?? {}, host);
  return forHost ? defaults.hostKeepLeftovers?.[host] === true : defaults.keepLeftovers === true;
}

/**
 * Where a job runs, decided in this one place for every surface. An explicit backend always wins; `--backend local`
 * with a host is refused. Otherwise a job with a host (given, or `[defaults] host` when the default backend is
 * remote) runs with that host's `[hosts.NAME] backend`, else the default backend if it is remote, else ssh; a job
 * with neither runs on the default backend.
 */
export function resolveTarget(
  req: Pick<LaunchRequest, "backend" | "host">,
  defaults: Pick<LaunchDefaults, "backend" | "host" | "hostBackends" | "capabilitiesOf">,
): { backend: BackendName; host: string | null } {
  const configured = (h: string) =>
    Object.hasOwn(defaults.hostBackends ?? {}, h) ? defaults.hostBackends?.[h] : undefined;
  const runsHere = (b: BackendName) => defaults.capabilitiesOf(b).runsHere;
  const remoteDefault = runsHere(defaults.backend) ? undefined : defaults.backend;
  if (req.host === "") throw invalid("the host was given an empty name", hint("host_name_empty"));
  if (req.backend && runsHere(req.backend)) {
    if (req.host) {
      throw invalid(
        `host ${req.host} was given with the ${req.backend} backend`,
        hint("local_with_host", { host: req.host }),
      );
    }
    return { backend: req.backend, host: null };
  }
  const host = req.host || (req.backend || remoteDefault ? defaults.host : null) || null;
  if (req.backend) {
    if (!host) {
      throw invalid(`the ${req.backend} backend needs a host`, hint("backend_needs_host"));
    }
    return { backend: req.backend, host };
  }
  if (host) return { backend: configured(host) ?? remoteDefault ?? "ssh", host };
  if (remoteDefault) {
    throw invalid(
      `the ${remoteDefault} backend ([defaults] backend) needs a host`,
      "add --host NAME, or set host in [defaults] of the config",
    );
  }
  return { backend: defaults.backend, host: null };
}

/** Resource locks: NAME=VALUE each, sorted and unique; refused without our admission (Slurm allocates resources). */
function validateResources(given: string[] | undefined, backend: BackendName, locks: boolean): string[] {
  const list = [...new Set(given ?? [])].sort();
  if (list.length > 0 && !locks) {
    throw invalid(`resource locks were given with the ${backend} backend`, hint("scheduler_no_resources"));
  }
  for (const r of list) {
    if (typeof r !== "string" || !RESOURCE_RE.test(r)) {
      throw invalid(`bad resource ${JSON.stringify(r)}`, hint("resource_form"));
    }
  }
  return list;
}

function optionalSeconds(v: number | undefined, what: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
    throw invalid(`bad ${what}: ${String(v)}`, hint("positive_duration"));
  }
  return v;
}

/**
 * --log-dir: local jobs only; absolute after resolving against the caller's cwd. It need not exist yet, but the
 * nearest existing ancestor must be a writable directory, so the launch can create LOG_DIR/<job_id>, and it and
 * every ancestor must be trusted (assertTrustedDir). Checked without creating anything: a refused request leaves no
 * directory behind.
 */
function checkLogDir(given: string, backend: BackendName, runsHere: boolean, callerCwd: string): string {
  if (!runsHere) {
    throw invalid(
      `--log-dir applies to local jobs, not the ${backend} backend`,
      hint("log_dir_remote", { backend }),
    );
  }
  if (typeof given !== "string" || given.trim() === "" || /[\0\n]/.test(given)) {
    throw invalid(`bad --log-dir ${JSON.stringify(given)}`, hint("log_dir_path"));
  }
  const dir = resolve(callerCwd, given);
  // Job directories are named by job ID: a log dir inside one would be removed with that job by gc.
  const inJob = dir.split("/").find((part) => /^job_[0-9A-HJKMNP-TV-Z]{26}$/.test(part));
  if (inJob) {
    throw invalid(
      `--log-dir ${dir} is inside the directory of job ${inJob}`,
      "choose a directory that is not inside any job's directory",
    );
  }
  // LOG_DIR/<job_id> holds spec.sh (the secrets) and the records cancel trusts: no other user may swap it.
  assertTrustedDir(dir, "--log-dir");
  for (let p = dir; ; p = dirname(p)) {
    let st: ReturnType<typeof statSync> | null = null;
    try {
      st = statSync(p);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Missing (or below a file: ENOTDIR): look at the parent, which says what is wrong.
      if (code !== "ENOENT" && code !== "ENOTDIR")
        throw invalid(`--log-dir ${dir}: ${p} cannot be read`, "choose a directory you can write to");
      if (code === "ENOENT" && isLink(p)) {
        throw invalid(
          `--log-dir ${dir}: ${p} is a symbolic link that points nowhere`,
          "create what it points to, or choose another directory",
        );
      }
    }
    if (st) {
      if (!st.isDirectory())
        throw invalid(`--log-dir ${dir}: ${p} is not a directory`, "choose a directory path, not a file");
      try {
        accessSync(p, constants.W_OK | constants.X_OK);
      } catch {
        throw invalid(`--log-dir ${dir}: ${p} is not writable`, "choose a directory you can write to");
      }
      return dir;
    }
    if (dirname(p) === p) return dir;
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function checkLocalDir(cwd: string): void {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(cwd);
  } catch {
    throw invalid(`working directory ${cwd} does not exist`, hint("cwd_missing"));
  }
  if (!st.isDirectory()) throw invalid(`working directory ${cwd} is not a directory`, hint("cwd_not_dir"));
  try {
    // readable and searchable by us (the command runs as us)
    accessSync(cwd, constants.R_OK | constants.X_OK);
  } catch {
    throw invalid(`working directory ${cwd} is not readable`, hint("cwd_unreadable"));
  }
}
