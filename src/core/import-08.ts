// `awaitless import`: brings the finished jobs of an Awaitless 0.8 store into ours, once each, with their logs.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsedResults } from "./artifacts.ts";
import { type Job08, read08Store } from "./awaitless08-store.ts";
import type { Backend } from "./backend.ts";
import { failureDigest } from "./digest.ts";
import type { ArtifactEntry, BackendName, ErrorInfo, JobResult, JobSpec, TerminalState } from "./job.ts";
import { isTerminal, JOB_STATES, type JobState } from "./job.ts";
import type { JobStore } from "./job-store.ts";
import { Redactor } from "./redact.ts";
import { readTails, seal } from "./result-builder.ts";
import { LEGACY_FILE } from "./store-file.ts";
import type { ImportedJob } from "./store-rows.ts";

export const IMPORTED_FROM = "awaitless-0.8";
/** store_meta key: when the last import ran (the first-run offer stops once it has). */
export const IMPORTED_META = "awaitless08_imported_at";

export interface ImportReport {
  source: string;
  imported: number;
  by_state: Partial<Record<TerminalState, number>>;
  already_imported: number;
  skipped: { job_id: string; state: string; backend: string; reason: string }[];
  /** Local jobs 0.8 still runs: imported active, they finish here when 0.8 records their end. */
  watching: { job_id: string; state: string }[];
  /** What 0.8 jobs from SSH/Slurm hosts lack here (their full logs stay on the host). */
  notes: string[];
  job_ids: string[];
}

const STAGE: Record<Exclude<TerminalState, "succeeded">, string> = {
  failed: "runtime_failed",
  cancelled: "cancelled",
  timed_out: "timed_out",
  lost: "lost",
};

export function reasonOf08(j: Job08, state: TerminalState): string | null {
  if (state === "succeeded") return null;
  if (state === "failed") {
    if (j.exit_code === null) return "launch_failed";
    return j.exit_code === 127 ? "command_not_found" : "nonzero_exit";
  }
  return state;
}

export function errorOf08(j: Job08, state: TerminalState, reason: string | null): ErrorInfo | null {
  if (state === "succeeded" || reason === null) return null;
  const detail = j.error ?? (typeof j.snapshot?.error === "string" ? j.snapshot.error : undefined);
  return {
    stage: STAGE[state],
    reason,
    retryable: false,
    suggestion: "this job ran under Awaitless 0.8; read its logs, fix the command and run it again",
    ...(detail ? { detail } : {}),
  };
}

/** 0.8's artifact entries as recorded at completion (never re-read: the files may have changed since). */
function artifactsOf(j: Job08, remote: boolean): ArtifactEntry[] {
  const recorded = Array.isArray(j.snapshot?.artifacts)
    ? (j.snapshot.artifacts as Record<string, unknown>[])
    : null;
  if (!recorded) {
    return j.artifacts.map((p) => ({
      path: p,
      declared_path: p,
      exists: false,
      remote,
      reason: "Awaitless 0.8 kept no result for this job, so its artifacts were not recorded",
    }));
  }
  return recorded.map((a) => {
    const path = String(a.path ?? "");
    const e: ArtifactEntry = {
      path,
      declared_path: typeof a.declared_path === "string" ? a.declared_path : path,
      exists: a.exists === true,
      remote: a.remote === true || remote,
    };
    if (typeof a.size_bytes === "number") e.size_bytes = a.size_bytes;
    if (typeof a.sha256 === "string") e.sha256 = a.sha256;
    if (typeof a.modified_at === "string") e.modified_at = a.modified_at;
    if (Object.hasOwn(a, "content")) e.content = a.content;
    if (typeof a.parse_error === "string") e.parse_error = a.parse_error;
    return e;
  });
}

/**
 * Copies a local job's stdout/stderr into `dir` under our names; a job whose files moved with the data
 * directory is found under SOURCE/jobs/ID. Remote jobs get the tails 0.8 kept in its result.
 */
function copyLogs(j: Job08, source: string, dir: string, local: boolean): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let complete = true;
  for (const stream of ["stdout", "stderr"] as const) {
    const target = join(dir, stream);
    if (local) {
      const recorded = stream === "stdout" ? j.stdout_path : j.stderr_path;
      const moved = join(source, "jobs", j.job_id, `${stream}.log`);
      const from = [recorded, moved].find((p) => existsSync(p));
      if (from) {
        copyFileSync(from, target);
        continue;
      }
      complete = false;
    }
    const tail = j.snapshot?.[`${stream}_tail`];
    writeFileSync(target, typeof tail === "string" ? tail : "", { mode: 0o600 });
  }
  return complete;
}

function specOf(j: Job08, backend: BackendName): JobSpec {
  return {
    argv: j.command,
    cwd: j.cwd ?? "",
    env: j.env,
    secret_env: [],
    backend,
    host: j.host,
    queue: null,
    timeout_seconds: j.timeout_seconds,
    stall_timeout_seconds: j.stall_timeout_seconds,
    artifacts: j.artifacts,
    slurm_options: {},
    name: j.name,
  };
}

function historyOf(j: Job08): ImportedJob["history"] {
  let from: JobState | null = null;
  return j.events
    .filter((e) => (JOB_STATES as readonly string[]).includes(e.state))
    .map((e, i) => {
      const h = { from_state: from, to_state: e.state as JobState, at: e.occurred_at, reason: e.detail };
      if (i === 0) h.reason = "created under Awaitless 0.8";
      from = e.state as JobState;
      return h;
    });
}

function skipReason(j: Job08): string | null {
  if (!["local", "ssh", "slurm"].includes(j.backend)) return `backend ${j.backend} is unknown here`;
  if (!(JOB_STATES as readonly string[]).includes(j.state) && j.state !== "pending") {
    return `state ${j.state} is unknown here`;
  }
  if (j.state === "pending" || !isTerminal(j.state as JobState)) {
    if (j.backend === "local") return null; // watched until 0.8 records its end
    return `still ${j.state} under Awaitless 0.8 on ${j.host ?? "its host"}: 0.8 follows ${j.backend} jobs (0.8's \`awaitless wait ${j.job_id}\`); import again once it finished`;
  }
  if (!j.finished_at) return "0.8 recorded no finish time";
  return null;
}

async function importOne(
  store: JobStore,
  local: Backend,
  j: Job08,
  source: string,
  dir: string,
  maxReturnBytes: number,
) {
  const state = j.state as TerminalState;
  const backend = j.backend as BackendName;
  const remote = backend !== "local";
  const complete = copyLogs(j, source, dir, !remote);
  const spec = specOf(j, backend);
  const reason = reasonOf08(j, state);
  const job = {
    job_id: j.job_id,
    name: j.name,
    backend,
    host: j.host,
    state,
    spec,
    fingerprint: `${IMPORTED_FROM}:${j.job_id}`,
    client_request_id: null,
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: j.finished_at,
    job_dir: dir,
    backend_id: null,
    status_message: null,
    cancel_requested_at: null,
    exit_code: j.exit_code,
    signal: null,
    reason,
  };
  const tails = await readTails(local, job, maxReturnBytes, new Redactor([]));
  const artifacts = artifactsOf(j, remote);
  const started = j.started_at ? Date.parse(j.started_at) : null;
  const finished = j.finished_at as string;
  const body: Omit<JobResult, "snapshot"> = {
    job_id: j.job_id,
    name: j.name,
    backend,
    host: j.host,
    state,
    exit_code: j.exit_code,
    signal: null,
    reason,
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: finished,
    duration_seconds:
      started === null ? null : Math.round(Math.max(0, Date.parse(finished) - started)) / 1000,
    stdout_tail: tails.stdout_tail,
    stderr_tail: tails.stderr_tail,
    stdout_bytes: tails.stdout.totalBytes,
    stderr_bytes: tails.stderr.totalBytes,
    stdout_dropped_bytes: 0,
    stderr_dropped_bytes: 0,
    truncated: tails.truncated || (remote && j.snapshot?.truncated === true),
    descendants_alive: false,
    digest: state === "succeeded" ? [] : failureDigest(tails.stdout_tail, tails.stderr_tail),
    artifacts,
    parsed_results: parsedResults(artifacts),
    error: errorOf08(j, state, reason),
  };
  const built = seal(body);
  const added = store.importJob({
    job_id: j.job_id,
    state,
    spec,
    fingerprint: job.fingerprint,
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: finished,
    job_dir: dir,
    backend_id: {
      imported_from: IMPORTED_FROM,
      source: join(source, LEGACY_FILE),
      logs: remote ? "tails kept by 0.8 (full logs stay on the host)" : complete ? "copied" : "missing",
      ...(j.pid ? { pid: j.pid } : {}),
      ...(j.pgid ? { pgid: j.pgid } : {}),
      ...(j.backend_id ? { backend_id_08: j.backend_id } : {}),
      ...(j.queue_name ? { queue_08: j.queue_name } : {}),
    },
    exit_code: j.exit_code,
    signal: null,
    reason,
    stdout_bytes: built.stdoutBytes,
    stderr_bytes: built.stderrBytes,
    result_json: built.json,
    result_sha256: built.sha256,
    history: historyOf(j),
  });
  return { added, complete };
}

/** Where 0.8 writes a local job's stream: as recorded, or under SOURCE/jobs/ID when the data directory moved. */
function logPath08(j: Job08, source: string, stream: "stdout" | "stderr"): string {
  const recorded = stream === "stdout" ? j.stdout_path : j.stderr_path;
  return existsSync(recorded) ? recorded : join(source, "jobs", j.job_id, `${stream}.log`);
}

/** A local job 0.8 still runs: imported active, and watched (backend_id.watch) until 0.8 records its end. */
function importWatched(store: JobStore, j: Job08, source: string): boolean {
  const to: JobState =
    j.state === "queued" || j.state === "pending" ? "queued" : j.state === "stalled" ? "stalled" : "running";
  return store.importJob({
    job_id: j.job_id,
    state: to,
    spec: specOf(j, "local"),
    fingerprint: `${IMPORTED_FROM}:${j.job_id}`,
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: null,
    job_dir: existsSync(j.job_dir) ? j.job_dir : join(source, "jobs", j.job_id),
    backend_id: {
      imported_from: IMPORTED_FROM,
      watch: true,
      source_dir: source,
      stdout_08: logPath08(j, source, "stdout"),
      stderr_08: logPath08(j, source, "stderr"),
      ...(j.pid ? { pid: j.pid, pid_start_ticks: j.pid_start_ticks } : {}),
      ...(j.runner_pid ? { runner_pid: j.runner_pid, runner_start_ticks: j.runner_start_ticks } : {}),
    },
    status_message: `${j.state} under Awaitless 0.8 (watched until 0.8 records its end)`,
    exit_code: null,
    signal: null,
    reason: null,
    stdout_bytes: null,
    stderr_bytes: null,
    result_json: null,
    result_sha256: null,
    history: historyOf(j),
  });
}

/** Imports every finished job of the 0.8 store in `source` that is not here yet. */
export async function importAwaitless08(opts: {
  store: JobStore;
  local: Backend;
  dataDir: string;
  source: string;
  maxReturnBytes: number;
}): Promise<ImportReport> {
  const jobs = read08Store(opts.source);
  const report: ImportReport = {
    source: join(opts.source, LEGACY_FILE),
    imported: 0,
    by_state: {},
    already_imported: 0,
    skipped: [],
    watching: [],
    notes: [],
    job_ids: [],
  };
  let remote = 0;
  for (const j of jobs) {
    const why = skipReason(j);
    if (why) {
      report.skipped.push({ job_id: j.job_id, state: j.state, backend: j.backend, reason: why });
      continue;
    }
    if (opts.store.get(j.job_id)) {
      report.already_imported++;
      continue;
    }
    if (!isTerminal(j.state as JobState)) {
      if (importWatched(opts.store, j, opts.source))
        report.watching.push({ job_id: j.job_id, state: j.state });
      else report.already_imported++;
      continue;
    }
    const dir = join(opts.dataDir, "imported-0.8", j.job_id);
    const { added, complete } = await importOne(
      opts.store,
      opts.local,
      j,
      opts.source,
      dir,
      opts.maxReturnBytes,
    );
    if (!added) {
      report.already_imported++;
      continue;
    }
    const state = j.state as TerminalState;
    report.imported++;
    report.by_state[state] = (report.by_state[state] ?? 0) + 1;
    report.job_ids.push(j.job_id);
    if (j.backend !== "local") remote++;
    else if (!complete) report.notes.push(`${j.job_id}: its log files were gone; only 0.8's tails were kept`);
  }
  if (remote > 0) {
    report.notes.push(
      `${remote} SSH/Slurm job(s): their state, exit code and result are imported; logs are the tails 0.8 kept (the full logs stay on the host, in 0.8's job directory)`,
    );
  }
  opts.store.setMeta(IMPORTED_META, new Date().toISOString());
  return report;
}
