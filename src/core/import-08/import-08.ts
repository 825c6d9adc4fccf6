// `awaitless import`: brings the jobs of an Awaitless 0.8 store into ours, once each, with their logs. Every value
// of the store is hostile input: rows typed and bounded, IDs by pattern, logs only from the store's own jobs/,
// every write checked by the job-directory guard, and all jobs stored in one transaction (or none).
import { lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Backend } from "../backend/backend.ts";
import { AwaitlessError } from "../model/errors.ts";
import type { BackendName, JobResult, TerminalState } from "../model/job.ts";
import { isTerminal, type JobState } from "../model/job.ts";
import { parsedResults } from "../results/artifacts.ts";
import { failureDigest } from "../results/digest.ts";
import { readTails, seal } from "../results/result-builder.ts";
import type { JobStore } from "../store/job-store.ts";
import type { ImportedJob } from "../store/rows.ts";
import { LEGACY_FILE } from "../store/store-file.ts";
import {
  checkJobDir,
  IMPORTED_DIR,
  type JobDirScope,
  jobDirScope,
  removeJobDir,
} from "../util/job-dir-guard.ts";
import { Redactor } from "../util/redact.ts";
import { assertTrustedSource, copy08Log, log08Path } from "./files-08.ts";
import { IMPORTED_META } from "./find-08.ts";
import { artifactsOf, errorOf08, historyOf, reasonOf08, skipReason, specOf } from "./map-08.ts";
import { StagingFile } from "./staging.ts";
import { type Job08, open08Store } from "./store-08.ts";

export const IMPORTED_FROM = "awaitless-0.8";
/** store_meta key: when the last import ran (the first-run offer stops once it has). */
/** How many entries each list of the report names (the counts cover all). */
export const REPORT_LIST_MAX = 100;

export interface ImportReport {
  source: string;
  imported: number;
  by_state: Partial<Record<TerminalState, number>>;
  already_imported: number;
  /** Rows not imported, with the reason (the first REPORT_LIST_MAX; skipped_count counts all). */
  skipped: { job_id: string; state: string; backend: string; reason: string }[];
  skipped_count: number;
  /** Local jobs 0.8 still runs: imported active, they finish here when 0.8 records their end (the first
   * REPORT_LIST_MAX; watching_count counts all). */
  watching: { job_id: string; state: string }[];
  watching_count: number;
  /** What 0.8 jobs lack here: logs 0.8 kept elsewhere, remote jobs' full logs (the first REPORT_LIST_MAX). */
  notes: string[];
  /** The imported IDs (the first REPORT_LIST_MAX; `imported` counts all). */
  job_ids: string[];
}

/** One prepared job, as staged before the transaction: the row to store and what the report says of it. */
interface Staged {
  job: ImportedJob;
  /** The state 0.8 gave it. */
  state08: string;
  remote: boolean;
  notes: string[];
}

function capped<T>(list: T[], item: T): void {
  if (list.length < REPORT_LIST_MAX) list.push(item);
}

/** A path 0.8 recorded, shown in a note: quoted (escapes visible), cut short. */
function quoted(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 199)}…` : path);
}

/**
 * Writes a local job's stdout/stderr into its new directory `dir` (0600, created fresh, never through a link): from
 * `<source>/jobs/<ID>/<stream>.log` only; never from the paths the row records, which a note names when they point
 * anywhere else. Remote jobs get the tails 0.8 kept in its result.
 */
function writeLogs(
  j: Job08,
  source: string,
  dir: string,
  local: boolean,
): { notes: string[]; complete: boolean } {
  const notes: string[] = [];
  let missing = false;
  for (const stream of ["stdout", "stderr"] as const) {
    const target = join(dir, stream);
    if (local) {
      const recorded = stream === "stdout" ? j.stdout_path : j.stderr_path;
      if (recorded !== "" && !recorded.endsWith(`/jobs/${j.job_id}/${stream}.log`)) {
        notes.push(
          `${j.job_id}: 0.8 recorded its ${stream} at ${quoted(recorded)}, outside ${quoted(log08Path(source, j.job_id, stream))}; that file was not read`,
        );
      }
      if (copy08Log(source, j.job_id, stream, target)) continue;
      missing = true;
    }
    const tail = j.snapshot?.[`${stream}_tail`];
    writeFileSync(target, typeof tail === "string" ? tail : "", { mode: 0o600, flag: "wx" });
  }
  if (missing)
    notes.push(`${j.job_id}: its log files were not in the store's jobs/; only 0.8's tails were kept`);
  return { notes, complete: !missing };
}

/** The job's own new directory under imported-0.8/ (one a crashed earlier import left is replaced). */
function freshDir(dir: string, scope: JobDirScope): void {
  removeJobDir(dir, scope);
  mkdirSync(dir, { mode: 0o700 });
  checkJobDir(dir, scope);
}

async function prepareFinished(
  local: Backend,
  j: Job08,
  source: string,
  dir: string,
  maxReturnBytes: number,
): Promise<Staged> {
  const state = j.state as TerminalState;
  const backend = j.backend as BackendName;
  const remote = backend !== "local";
  const { notes, complete } = writeLogs(j, source, dir, !remote);
  const spec = specOf(j, backend);
  const reason = reasonOf08(j, state);
  const fingerprint = `${IMPORTED_FROM}:${j.job_id}`;
  const job = {
    job_id: j.job_id,
    name: j.name,
    backend,
    host: j.host,
    state,
    spec,
    fingerprint,
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
  return {
    state08: j.state,
    remote,
    notes,
    job: {
      job_id: j.job_id,
      state,
      spec,
      fingerprint,
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
    },
  };
}

/** A local job 0.8 still runs: imported active, and watched (backend_id.watch) until 0.8 records its end. */
function prepareWatched(j: Job08, source: string): Staged {
  const to: JobState =
    j.state === "queued" || j.state === "pending" ? "queued" : j.state === "stalled" ? "stalled" : "running";
  return {
    state08: j.state,
    remote: false,
    notes: [],
    job: {
      job_id: j.job_id,
      state: to,
      spec: specOf(j, "local"),
      fingerprint: `${IMPORTED_FROM}:${j.job_id}`,
      created_at: j.created_at,
      started_at: j.started_at,
      finished_at: null,
      // 0.8's own directory for the job (its files stay 0.8's: nothing here removes or writes them)
      job_dir: join(source, "jobs", j.job_id),
      backend_id: {
        imported_from: IMPORTED_FROM,
        watch: true,
        source_dir: source,
        stdout_08: log08Path(source, j.job_id, "stdout"),
        stderr_08: log08Path(source, j.job_id, "stderr"),
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
    },
  };
}

/** Our imported-0.8/ directory: made 0700 when missing, and refused when it is a link or not a directory. */
function importRoot(dataDir: string): string {
  const root = join(dataDir, IMPORTED_DIR);
  try {
    mkdirSync(root, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const st = lstatSync(root);
  if (!st.isDirectory()) {
    throw new AwaitlessError(
      "store_unavailable",
      `${root} is ${st.isSymbolicLink() ? "a symbolic link" : "not a directory"}; imported jobs are kept only in a directory of the data directory itself`,
      `remove ${root} and run the import again`,
    );
  }
  return root;
}

/**
 * Imports every job of the 0.8 store in `source` that is not here yet. Its rows are read one at a time and
 * prepared (logs copied, results sealed) into a staging file, then stored in one transaction: a failure anywhere
 * stores nothing and removes what this import made.
 */
export async function importAwaitless08(opts: {
  store: JobStore;
  local: Backend;
  dataDir: string;
  source: string;
  maxReturnBytes: number;
  /** How the source is named in a refusal ("--from", or "the Awaitless 0.8 store"). */
  sourceName?: string;
}): Promise<ImportReport> {
  assertTrustedSource(opts.source, opts.sourceName ?? "--from");
  const src = open08Store(opts.source);
  const report: ImportReport = {
    source: join(opts.source, LEGACY_FILE),
    imported: 0,
    by_state: {},
    already_imported: 0,
    skipped: [],
    skipped_count: 0,
    watching: [],
    watching_count: 0,
    notes: [],
    job_ids: [],
  };
  const skip = (s: ImportReport["skipped"][number]) => {
    report.skipped_count++;
    capped(report.skipped, s);
  };
  const root = importRoot(opts.dataDir);
  const staging = new StagingFile<Staged>(root);
  const made: string[] = []; // the directory being prepared (the staged ones are listed in the staging file)
  try {
    let previous: string | null = null;
    for (const row of src.rows()) {
      if ("skipped" in row) {
        skip(row.skipped);
        continue;
      }
      const j = row.job;
      if (j.job_id === previous) {
        skip({
          job_id: j.job_id,
          state: j.state,
          backend: j.backend,
          reason: "its job_id appears twice in the store",
        });
        continue;
      }
      previous = j.job_id;
      const why = skipReason(j);
      if (why) {
        skip({ job_id: j.job_id, state: j.state, backend: j.backend, reason: why });
        continue;
      }
      if (opts.store.get(j.job_id)) {
        report.already_imported++;
        continue;
      }
      if (!isTerminal(j.state as JobState)) {
        staging.add(prepareWatched(j, opts.source));
        continue;
      }
      const dir = join(root, j.job_id);
      const scope = jobDirScope({ job_id: j.job_id }, opts.dataDir);
      made.push(dir);
      freshDir(dir, scope);
      staging.add(await prepareFinished(opts.local, j, opts.source, dir, opts.maxReturnBytes));
      made.pop();
    }
    let remote = 0;
    let notes = 0;
    const already = report.already_imported;
    opts.store.imports.addAll(
      () => staging.items(),
      () => {
        Object.assign(report, {
          imported: 0,
          by_state: {},
          watching: [],
          watching_count: 0,
          job_ids: [],
          notes: [],
        });
        report.already_imported = already;
        remote = 0;
        notes = 0;
      },
      (s, added) => {
        const j = s.job;
        if (!added) {
          report.already_imported++;
          return;
        }
        for (const n of s.notes) {
          notes++;
          capped(report.notes, n);
        }
        if (!isTerminal(j.state)) {
          report.watching_count++;
          capped(report.watching, { job_id: j.job_id, state: s.state08 });
          return;
        }
        if (s.remote) remote++;
        report.imported++;
        report.by_state[j.state] = (report.by_state[j.state] ?? 0) + 1;
        capped(report.job_ids, j.job_id);
      },
    );
    if (notes > report.notes.length)
      report.notes.push(`… and ${notes - report.notes.length} more notes like these`);
    if (remote > 0) {
      report.notes.push(
        `${remote} SSH/Slurm job(s): their state, exit code and result are imported; logs are the tails 0.8 kept (the full logs stay on the host, in 0.8's job directory)`,
      );
    }
  } catch (e) {
    // nothing was stored: remove every directory this import made
    for (const dir of made) removeQuietly(dir, opts.dataDir);
    try {
      for (const s of staging.items())
        if (isTerminal(s.job.state)) removeQuietly(s.job.job_dir, opts.dataDir);
    } catch {
      // the staging file itself is unreadable: the directories stay (each is replaced by the next import)
    }
    throw e;
  } finally {
    staging.remove();
    src.close();
  }
  opts.store.meta.set(IMPORTED_META, new Date().toISOString());
  return report;
}

function removeQuietly(dir: string, dataDir: string): void {
  try {
    removeJobDir(dir, jobDirScope({ job_id: dir.slice(dir.lastIndexOf("/") + 1) }, dataDir));
  } catch {
    // refused or gone: left as it is
  }
}
