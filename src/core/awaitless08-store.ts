// Reads an Awaitless 0.8 store without touching it: its database is copied to a private directory and read there.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwaitlessError } from "./errors.ts";
import { openSqlite } from "./sqlite.ts";
import { classifyDb, LEGACY_FILE } from "./store-file.ts";

/** One row of 0.8's `jobs` table (the columns import uses; JSON columns decoded). */
export interface Job08 {
  job_id: string;
  name: string | null;
  backend: string;
  host: string | null;
  command: string[];
  cwd: string | null;
  env: Record<string, string>;
  state: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  timeout_seconds: number | null;
  stall_timeout_seconds: number | null;
  pid: number | null;
  pid_start_ticks: number | null;
  runner_pid: number | null;
  runner_start_ticks: number | null;
  pgid: number | null;
  backend_id: string | null;
  job_dir: string;
  stdout_path: string;
  stderr_path: string;
  artifacts: string[];
  queue_name: string | null;
  error: string | null;
  events: { state: string; occurred_at: string; detail: string | null }[];
  /** 0.8's immutable terminal result (from `completion_snapshots`), when a client had read it. */
  snapshot: Record<string, unknown> | null;
}

/** 0.8's data directories for this environment: ours (same layout), then 0.8's own default. */
export function awaitless08Dirs(env: Record<string, string | undefined>, ourDataDir: string): string[] {
  const home = env.HOME || "";
  const own = env.AWAITLESS_DATA_DIR || join(home, ".local", "share", "awaitless");
  return [...new Set([ourDataDir, own])];
}

/** The first of `dirs` holding an 0.8 database, or null. */
export function find08Store(dirs: string[]): string | null {
  for (const d of dirs) if (classifyDb(join(d, LEGACY_FILE)) === "awaitless-0.8") return d;
  return null;
}

function json<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/**
 * Every job of the 0.8 store in `dir` (or only `jobId`), oldest first. Its files are only read (copied first),
 * never written.
 */
export function read08Store(dir: string, jobId?: string): Job08[] {
  const db08 = join(dir, LEGACY_FILE);
  if (classifyDb(db08) !== "awaitless-0.8") {
    throw new AwaitlessError(
      "not_found",
      `no Awaitless 0.8 store in ${dir} (looked for ${LEGACY_FILE} with 0.8's tables)`,
      "pass the directory 0.8 used as its data directory: `awaitless import --from DIR`",
    );
  }
  const tmp = mkdtempSync(join(tmpdir(), "awaitless-import-"));
  try {
    const copy = join(tmp, LEGACY_FILE);
    copyFileSync(db08, copy);
    // a running 0.8 keeps recent writes in its WAL: the copy reads them as 0.8 would
    if (existsSync(`${db08}-wal`)) copyFileSync(`${db08}-wal`, `${copy}-wal`);
    const db = openSqlite(copy, "readwrite");
    try {
      const rows = (
        jobId === undefined
          ? db.query("SELECT * FROM jobs ORDER BY created_at, job_id").all()
          : db.query("SELECT * FROM jobs WHERE job_id = ?").all(jobId)
      ) as Record<string, unknown>[];
      const events = db
        .query("SELECT job_id, state, occurred_at, detail FROM state_events ORDER BY id")
        .all() as { job_id: string; state: string; occurred_at: string; detail: string | null }[];
      const snaps = db.query("SELECT job_id, result_json FROM completion_snapshots").all() as {
        job_id: string;
        result_json: string;
      }[];
      const snapOf = new Map(
        snaps.map((s) => [s.job_id, json<Record<string, unknown> | null>(s.result_json, null)]),
      );
      return rows.map((r) => ({
        job_id: String(r.job_id),
        name: (r.name as string | null) ?? null,
        backend: String(r.backend),
        host: (r.host as string | null) ?? null,
        command: json<string[]>(r.command_json as string, []),
        cwd: (r.cwd as string | null) ?? null,
        env: json<Record<string, string>>(r.env_json as string, {}),
        state: String(r.state),
        created_at: String(r.created_at),
        started_at: (r.started_at as string | null) ?? null,
        finished_at: (r.finished_at as string | null) ?? null,
        exit_code: (r.exit_code as number | null) ?? null,
        timeout_seconds: (r.timeout_seconds as number | null) ?? null,
        stall_timeout_seconds: (r.stall_timeout_seconds as number | null) ?? null,
        pid: (r.pid as number | null) ?? null,
        pid_start_ticks: (r.pid_start_ticks as number | null) ?? null,
        runner_pid: (r.runner_pid as number | null) ?? null,
        runner_start_ticks: (r.runner_start_ticks as number | null) ?? null,
        pgid: (r.pgid as number | null) ?? null,
        backend_id: (r.backend_id as string | null) ?? null,
        job_dir: String(r.job_dir),
        stdout_path: String(r.stdout_path),
        stderr_path: String(r.stderr_path),
        artifacts: json<string[]>(r.artifacts_json as string, []),
        queue_name: (r.queue_name as string | null) ?? null,
        error: (r.error as string | null) ?? null,
        events: events.filter((e) => e.job_id === r.job_id),
        snapshot: snapOf.get(String(r.job_id)) ?? null,
      }));
    } finally {
      db.close();
    }
  } catch (e) {
    if (e instanceof AwaitlessError) throw e;
    throw new AwaitlessError(
      "store_unavailable",
      `cannot read the Awaitless 0.8 store ${db08}: ${(e as Error).message}`,
      "stop Awaitless 0.8 processes that use it and run the import again (the 0.8 store was not changed)",
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
