// Jobs still run by Awaitless 0.8, imported to be watched: 0.8's runner records their end in 0.8's database,
// which this backend reads (on a private copy) without ever writing 0.8's files; logs are read from 0.8's job dir.
import { closeSync, existsSync, readSync, watch } from "node:fs";
import { join } from "node:path";
import type { Backend, BackendCapabilities, LogTail, Stream } from "../../core/backend/backend.ts";
import { open08Log } from "../../core/import-08/files-08.ts";
import { errorOf08, reasonOf08 } from "../../core/import-08/map-08.ts";
import { type Job08, LEGACY_FILE, read08Job } from "../../core/import-08/store-08.ts";
import type { LogQuery, LogScan } from "../../core/logs/log-query.ts";
import { type Watched08BackendId, watched08Of } from "../../core/model/backend-id.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { ArtifactEntry, BackendId, Job, TerminalState } from "../../core/model/job.ts";
import { isTerminal, type JobState } from "../../core/model/job.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { Decision } from "../../core/rules/reconcile.ts";
import { collectLocalArtifacts } from "../local/artifacts-local.ts";
import { scanOpenFile } from "../local/local-logs.ts";
import { isProcessAlive } from "../local/proc.ts";

/** The watched job's record of 0.8's files and processes (only such jobs come to this backend). */
function idOf(job: Job): Watched08BackendId {
  const id = watched08Of(job);
  if (!id) {
    throw new AwaitlessError(
      "internal",
      `job ${job.job_id} is not one Awaitless 0.8 runs (its backend_id has no watch)`,
      "report this as a bug: only a job imported from a running Awaitless 0.8 is watched",
    );
  }
  return id;
}

function alive(pid: unknown, ticks: unknown): boolean {
  return typeof pid === "number" && pid > 0 && isProcessAlive(pid, ticks == null ? null : String(ticks));
}

/** 0.8's verdict on a job: its recorded end, or lost when its runner and command are gone without one. */
export function verdict08(row: Job08 | undefined, runnerOrCommandAlive: boolean, nowIso: string): Decision {
  if (!row) {
    return lost08(
      nowIso,
      null,
      "the job is no longer in the Awaitless 0.8 store, which recorded no end for it",
    );
  }
  if (isTerminal(row.state as JobState)) {
    const to = row.state as TerminalState;
    const reason = reasonOf08(row, to);
    return {
      kind: "terminal",
      to,
      exit_code: row.exit_code,
      signal: null,
      reason,
      finished_at: row.finished_at ?? nowIso,
      started_at: row.started_at,
      descendants_alive: false,
      error: errorOf08(row, to, reason),
    };
  }
  if (runnerOrCommandAlive) return { kind: "none" };
  return lost08(
    nowIso,
    row.started_at,
    "Awaitless 0.8's runner and the command are gone, and 0.8 recorded no exit status",
  );
}

function lost08(at: string, startedAt: string | null, detail: string): Decision {
  return {
    kind: "terminal",
    to: "lost",
    exit_code: null,
    signal: null,
    reason: "runner_gone",
    finished_at: at,
    started_at: startedAt,
    descendants_alive: false,
    error: {
      stage: "lost",
      reason: "runner_gone",
      retryable: true,
      suggestion: "run the command again",
      detail,
    },
  };
}

/**
 * Runs `use` on the job's stream log as 0.8 keeps it: only `<0.8's data dir>/jobs/<ID>/<stream>.log`, opened without
 * following a link (open08Log), whatever path the row recorded; null when it is not there.
 */
function withLog08<T>(job: Job, stream: Stream, use: (file: { fd: number; size: number } | null) => T): T {
  const f = open08Log(idOf(job).source_dir, job.job_id, stream);
  if ("missing" in f) return use(null);
  try {
    return use(f);
  } finally {
    closeSync(f.fd);
  }
}

function readTailOf(file: { fd: number; size: number } | null, maxBytes: number): LogTail {
  if (file === null) return { bytes: new Uint8Array(), totalBytes: 0, droppedBytes: 0 };
  const n = Math.min(file.size, maxBytes);
  const buf = Buffer.alloc(n);
  readSync(file.fd, buf, 0, n, file.size - n);
  return { bytes: new Uint8Array(buf), totalBytes: file.size, droppedBytes: 0 };
}

export class Awaitless08WatchBackend implements Backend {
  readonly name = "local" as const;
  /** A job Awaitless 0.8 runs on this machine, only watched here: it is never launched, queued or held by us. */
  readonly capabilities: BackendCapabilities = {
    label: "Awaitless 0.8",
    runsHere: true,
    remoteJobDir: false,
    schedulesItself: false,
    nativeDependencies: false,
    nativeArrays: false,
    namedQueues: false,
    keepsLeftovers: false,
  };

  async launch(): Promise<BackendId> {
    throw new Error("jobs of Awaitless 0.8 are never launched here");
  }

  async observe(job: Job): Promise<Observation> {
    const b = idOf(job);
    // liveness first: a runner that records the end and exits is then seen by the read that follows
    const running = alive(b.pid, b.pid_start_ticks) || alive(b.runner_pid, b.runner_start_ticks);
    const source = b.source_dir;
    let row: Job08 | undefined;
    if (existsSync(join(source, LEGACY_FILE))) {
      try {
        row = read08Job(source, job.job_id);
      } catch (e) {
        // unreadable for now (e.g. mid-write): the job keeps its state until the next look
        const unreachable = `cannot read the Awaitless 0.8 store in ${source}: ${(e as Error).message}`;
        return {
          started: null,
          exit: null,
          wrapperAlive: running,
          bootIdNow: null,
          heartbeat: null,
          unreachable,
        };
      }
    }
    return {
      started: null,
      exit: null,
      wrapperAlive: running,
      bootIdNow: null,
      heartbeat: null,
      recorded: verdict08(row, running, new Date().toISOString()),
    };
  }

  async cancel(): Promise<void> {
    throw new AwaitlessError(
      "invalid_argument",
      "this job is run by Awaitless 0.8, which owns it",
      "cancel it with Awaitless 0.8; this store follows it until 0.8 records its end",
    );
  }

  async readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail> {
    return withLog08(job, stream, (f) => readTailOf(f, maxBytes));
  }

  async scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan> {
    return withLog08(job, stream, (f) => scanOpenFile(f, query));
  }

  async collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]> {
    return collectLocalArtifacts(job.spec.cwd, job.spec.artifacts, { maxInlineBytes });
  }

  async secretValues(): Promise<Record<string, string>> {
    return {};
  }

  /** Any change in 0.8's data directory (its database or WAL), or the timeout. */
  waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let watcher: ReturnType<typeof watch> | undefined;
      const done = () => {
        clearTimeout(timer);
        watcher?.close();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, timeoutMs));
      signal?.addEventListener("abort", done);
      try {
        watcher = watch(idOf(job).source_dir, { persistent: true }, done);
      } catch {
        // the directory is gone: the timeout still ends the wait
      }
    });
  }

  /** gc drops only our row: the job's files belong to Awaitless 0.8 (no path is removed, so none is checked). */
  async remove(): Promise<void> {}
}
