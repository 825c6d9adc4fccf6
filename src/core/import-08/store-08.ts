// Reads an Awaitless 0.8 store without touching it: its database is copied to a private directory and read there,
// row by row (memory stays bounded however many rows it has), each row typed and bounded (import-08/rows-08.ts).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwaitlessError } from "../model/errors.ts";
import { type Database, openSqlite } from "../store/sqlite.ts";
import { classifyDb, LEGACY_FILE } from "../store/store-file.ts";
import { copySourceFile } from "./files-08.ts";
import {
  EVENT_COLUMNS_08,
  EVENTS_PER_JOB_08,
  JOB_COLUMNS_08,
  type Job08,
  REQUIRED_COLUMNS_08,
  Skip08,
  SNAPSHOT_CHARS_08,
  typeRow08,
} from "./rows-08.ts";

export type { Job08 } from "./rows-08.ts";
/** The database file name of an 0.8 data directory. */
export { LEGACY_FILE };

/** A row of the store: the typed job, or why it is skipped (with the ID as found, cut short). */
export type Row08 =
  | { job: Job08 }
  | { skipped: { job_id: string; state: string; backend: string; reason: string } };

/** An 0.8 store opened for reading: its rows one at a time, oldest ID first. Close it to remove the private copy. */
export interface Store08 {
  /** Every row, or only job `only`'s. */
  rows(only?: string): Generator<Row08>;
  close(): void;
}

const TABLES = ["jobs", "state_events", "completion_snapshots"] as const;

/** Column `expr` read as `name` with its length bounded in SQL, so a huge value never reaches this process. */
function boundedColumn(expr: string, name: string, max: number): string {
  return `CASE WHEN typeof(${expr}) IN ('text','blob') THEN substr(${expr}, 1, ${max + 1}) ELSE ${expr} END AS "${name}"`;
}

function columnsOf(db: Database, table: string): Set<string> {
  return new Set((db.query(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name));
}

/** Short printable form of a value found where an ID or name should be (for a skip reason). */
function shown(v: unknown): string {
  const s = typeof v === "string" ? v : v === null || v === undefined ? "" : String(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/**
 * Opens the 0.8 store in `dir`. Refused (nothing read) when it is not one, when `jobs`, `state_events` or
 * `completion_snapshots` is not a table (0.8 makes tables; a view could compute anything), or when a column import
 * needs is missing.
 */
export function open08Store(dir: string): Store08 {
  const db08 = join(dir, LEGACY_FILE);
  if (classifyDb(db08) !== "awaitless-0.8") {
    throw new AwaitlessError(
      "not_found",
      `no Awaitless 0.8 store in ${dir} (looked for ${LEGACY_FILE} with 0.8's tables)`,
      "pass the directory 0.8 used as its data directory: `awaitless import --from DIR`",
    );
  }
  const tmp = mkdtempSync(join(tmpdir(), "awaitless-import-"));
  let db: Database | undefined;
  const unreadable = (why: string) =>
    new AwaitlessError(
      "store_unavailable",
      `cannot read the Awaitless 0.8 store ${db08}: ${why}`,
      "stop Awaitless 0.8 processes that use it and run the import again (the 0.8 store was not changed)",
    );
  try {
    const copy = join(tmp, LEGACY_FILE);
    copySourceFile(db08, copy);
    // a running 0.8 keeps recent writes in its WAL: the copy reads them as 0.8 would
    if (existsSync(`${db08}-wal`)) copySourceFile(`${db08}-wal`, `${copy}-wal`);
    db = openSqlite(copy, "readwrite");
    db.exec("PRAGMA trusted_schema = OFF");
    for (const t of TABLES) {
      const row = db.query("SELECT type FROM sqlite_master WHERE name = ?").get(t) as { type: string } | null;
      if (row?.type !== "table")
        throw unreadable(`its ${t} is ${row ? `a ${row.type}` : "missing"}, not 0.8's table`);
    }
    const have = columnsOf(db, "jobs");
    const missing = REQUIRED_COLUMNS_08.filter((c) => !have.has(c));
    if (missing.length > 0) throw unreadable(`its jobs table has no ${missing.join(", ")} column`);
    const evCols = columnsOf(db, "state_events");
    for (const c of ["id", "job_id", "state", "occurred_at"])
      if (!evCols.has(c)) throw unreadable(`its state_events table has no ${c} column`);
    if (
      !columnsOf(db, "completion_snapshots").has("result_json") ||
      !columnsOf(db, "completion_snapshots").has("job_id")
    )
      throw unreadable("its completion_snapshots table has no job_id or result_json column");
  } catch (e) {
    db?.close();
    rmSync(tmp, { recursive: true, force: true });
    if (e instanceof AwaitlessError) throw e;
    throw unreadable((e as Error).message);
  }
  const jobsDb = db;
  const have = columnsOf(jobsDb, "jobs");
  const select = (Object.keys(JOB_COLUMNS_08) as (keyof typeof JOB_COLUMNS_08)[])
    .map((c) => (have.has(c) ? boundedColumn(`j.${c}`, c, JOB_COLUMNS_08[c]) : `NULL AS "${c}"`))
    .join(", ");
  // A job's events and snapshot ride in its row (correlated, indexed subqueries run inside SQLite): the events as
  // a JSON array SQLite builds from bounded text values (anything else becomes null, which the typing refuses).
  const text = (col: string, max: number) =>
    `CASE WHEN typeof(${col}) = 'text' THEN substr(${col}, 1, ${max + 1}) END`;
  const detail = columnsOf(jobsDb, "state_events").has("detail")
    ? text("e.detail", EVENT_COLUMNS_08.detail)
    : "NULL";
  const events = `(SELECT json_group_array(json_object('state', ${text("e.state", EVENT_COLUMNS_08.state)}, 'occurred_at', ${text("e.occurred_at", EVENT_COLUMNS_08.occurred_at)}, 'detail', ${detail})) FROM (SELECT * FROM state_events e0 WHERE e0.job_id = j.job_id ORDER BY e0.id LIMIT ${EVENTS_PER_JOB_08 + 1}) e) AS awaitless_events`;
  const snapshot = `(SELECT ${boundedColumn("s.result_json", "result_json", SNAPSHOT_CHARS_08).replace(/ AS "result_json"$/, "")} FROM completion_snapshots s WHERE s.job_id = j.job_id LIMIT 1) AS awaitless_snapshot`;
  return {
    *rows(only?: string) {
      try {
        if (only === undefined) {
          // on the private copy only: lookups by job, so each row's events cost one indexed read
          jobsDb.exec("CREATE INDEX IF NOT EXISTS awaitless_import_events ON state_events(job_id, id)");
          jobsDb.exec(
            "CREATE INDEX IF NOT EXISTS awaitless_import_snapshots ON completion_snapshots(job_id)",
          );
        }
        const where = only === undefined ? "" : "WHERE j.job_id = ?";
        const all = jobsDb.query(
          `SELECT ${select}, ${events}, ${snapshot} FROM jobs j ${where} ORDER BY j.job_id`,
        );
        const found = (only === undefined ? all.iterate() : all.iterate(only)) as IterableIterator<
          Record<string, unknown>
        >;
        for (const raw of found) {
          const id = raw.job_id;
          try {
            const ev = JSON.parse(String(raw.awaitless_events ?? "[]")) as Record<string, unknown>[];
            yield { job: typeRow08(raw, ev, raw.awaitless_snapshot ?? null) };
          } catch (e) {
            if (!(e instanceof Skip08)) throw e;
            yield {
              skipped: {
                job_id: shown(id),
                state: shown(raw.state),
                backend: shown(raw.backend),
                reason: e.message,
              },
            };
          }
        }
      } catch (e) {
        if (e instanceof AwaitlessError) throw e;
        throw unreadable((e as Error).message);
      }
    },
    close() {
      jobsDb.close();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/** The job `jobId` of the 0.8 store in `dir` (typed), or undefined when it is not there or its row is refused. */
export function read08Job(dir: string, jobId: string): Job08 | undefined {
  const s = open08Store(dir);
  try {
    for (const r of s.rows(jobId)) if ("job" in r && r.job.job_id === jobId) return r.job;
    return undefined;
  } finally {
    s.close();
  }
}
