// Builds Awaitless 0.8 stores for tests: the schema of the fixture 0.8 wrote itself, rows as 0.8 would write them,
// and any value a test wants to make hostile. Seeded IDs for the fuzz tests.
import { constants, Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./cli.ts";

export const FIXTURE_08 = join(ROOT, "test", "fixtures", "awaitless-08", "data");

/** The CREATE statements of the fixture's database (tables, then indexes), as 0.8 made them. */
export function schema08(): string[] {
  const db = new Database(
    `file:${join(FIXTURE_08, "awaitless.db")}?immutable=1`,
    constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI,
  );
  try {
    const rows = db
      .query("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type = 'index', rowid")
      .all() as { type: string; name: string; sql: string }[];
    return rows.filter((r) => r.name !== "sqlite_sequence").map((r) => r.sql);
  } finally {
    db.close();
  }
}

let counter = 0;
/** A fresh 0.8-shaped job ID (`job_` + 22 upper-case hex digits); wholly from `rand` when one is given. */
export function id08(rand?: () => number): string {
  const offset = rand ? Math.floor(rand() * 2 ** 32) : counter++;
  const ms = (0x019a00000000 + offset).toString(16).toUpperCase().padStart(12, "0");
  const r = rand ?? Math.random;
  const tail = Array.from({ length: 10 }, () => "0123456789ABCDEF"[Math.floor(r() * 16)]).join("");
  return `job_${ms}${tail}`;
}

export type Row08 = Record<string, unknown>;

/** A finished local job as 0.8 writes it, in data directory `dataDir`; `over` replaces any column. */
export function row08(dataDir: string, over: Row08 = {}): Row08 {
  const id = over.job_id === undefined ? id08() : String(over.job_id);
  const at = "2026-01-01T10:00:00.000000Z";
  return {
    job_id: id,
    name: "job",
    backend: "local",
    host: null,
    command_json: JSON.stringify(["sh", "-c", "echo hi"]),
    cwd: "/",
    env_json: "{}",
    state: "succeeded",
    created_at: at,
    started_at: at,
    finished_at: "2026-01-01T10:00:01.000000Z",
    exit_code: 0,
    job_dir: join(dataDir, "jobs", id),
    stdout_path: join(dataDir, "jobs", id, "stdout.log"),
    stderr_path: join(dataDir, "jobs", id, "stderr.log"),
    artifacts_json: "[]",
    updated_at: at,
    ...over,
  };
}

/**
 * Writes `dir/awaitless.db` with 0.8's schema and these rows (and their events / snapshots when given); `preSql` runs
 * before the rows go in, `sql` after.
 */
export function write08Store(
  dir: string,
  rows: Row08[],
  extra: { events?: Row08[]; snapshots?: Row08[]; preSql?: string[]; sql?: string[] } = {},
): void {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "awaitless.db"), { create: true });
  try {
    for (const s of schema08()) db.exec(s);
    for (const s of extra.preSql ?? []) db.exec(s);
    const insert = (table: string, r: Row08) => {
      const cols = Object.keys(r);
      db.query(
        `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(",")}) VALUES (${cols.map(() => "?").join(",")})`,
      ).run(
        // biome-ignore lint/suspicious/noExplicitAny: any SQLite value a test wants
        ...(Object.values(r) as any[]),
      );
    };
    db.exec("BEGIN");
    for (const r of rows) insert("jobs", r);
    for (const e of extra.events ?? []) insert("state_events", e);
    for (const s of extra.snapshots ?? []) insert("completion_snapshots", s);
    db.exec("COMMIT");
    for (const s of extra.sql ?? []) db.exec(s);
  } finally {
    db.close();
  }
}
