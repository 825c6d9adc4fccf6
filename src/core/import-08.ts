// `awaitless import`: brings the finished jobs of an Awaitless 0.8 store into ours, once each, with their logs.
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsedResults } from "./artifacts.ts";
import {
  artifactsOf,
  errorOf08,
  historyOf,
  logPath08,
  reasonOf08,
  skipReason,
  specOf,
} from "./awaitless08-map.ts";
import { type Job08, read08Store } from "./awaitless08-store.ts";
import type { Backend } from "./backend.ts";
import { failureDigest } from "./digest.ts";
import type { BackendName, JobResult, TerminalState } from "./job.ts";
import { isTerminal, type JobState } from "./job.ts";
import type { JobStore } from "./job-store.ts";
import { Redactor } from "./redact.ts";
import { readTails, seal } from "./result-builder.ts";
import { LEGACY_FILE } from "./store-file.ts";

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
