// Which database file of the data directory is ours: `store.db`, never the `awaitless.db` that Awaitless 0.8
// keeps in the same directory. An older store of ours at that name is moved once (when no process has it open).
import { existsSync, linkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { openSqlite } from "./sqlite.ts";

/** Our database file name in the data directory. */
export const STORE_FILE = "store.db";
/** The name Awaitless 0.8 uses (and Awaitless before this release used too). */
export const LEGACY_FILE = "awaitless.db";

export type DbKind = "absent" | "ours" | "awaitless-0.8" | "unknown";

/**
 * What a database file is, read without locking or writing anything (SQLite `immutable`): 0.8's has
 * `state_events`/`completion_snapshots` and user_version 0; ours has `state_history` and user_version ≥ 1.
 */
export function classifyDb(path: string): DbKind {
  if (!existsSync(path)) return "absent";
  let db: ReturnType<typeof openSqlite> | undefined;
  try {
    db = openSqlite(path, "immutable");
    const tables = new Set(
      (db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (tables.has("state_events") || tables.has("completion_snapshots")) return "awaitless-0.8";
    if (tables.has("state_history") && tables.has("jobs") && version >= 1) return "ours";
    return "unknown";
  } catch {
    return "unknown";
  } finally {
    db?.close();
  }
}

/**
 * Moves our store from LEGACY_FILE to STORE_FILE when no other process has it open: switching it out of WAL
 * proves that (SQLite refuses while another connection exists), and the exclusive lock keeps newcomers out
 * while the name changes (link then unlink: never replaces a file). Returns false when it stays where it is.
 */
export function migrateLegacyStore(dataDir: string): boolean {
  const from = join(dataDir, LEGACY_FILE);
  const to = join(dataDir, STORE_FILE);
  let db: ReturnType<typeof openSqlite>;
  try {
    db = openSqlite(from, "readwrite");
  } catch {
    return false;
  }
  try {
    const mode = (db.query("PRAGMA journal_mode = DELETE").get() as { journal_mode: string }).journal_mode;
    if (mode !== "delete") return false;
    db.exec("BEGIN EXCLUSIVE");
    try {
      linkSync(from, to);
      unlinkSync(from);
    } finally {
      db.exec("COMMIT");
    }
    return true;
  } catch {
    return false;
  } finally {
    db.close();
  }
}

export interface StoreLocation {
  path: string;
  /** Set when our store still sits at the legacy name because another process had it open. */
  legacy: boolean;
}

/** Where our store is: STORE_FILE, or our own older store at LEGACY_FILE (moved to STORE_FILE when it can be). */
export function locateStore(dataDir: string): StoreLocation {
  const path = join(dataDir, STORE_FILE);
  if (existsSync(path)) return { path, legacy: false };
  const legacy = join(dataDir, LEGACY_FILE);
  if (classifyDb(legacy) !== "ours") return { path, legacy: false };
  if (migrateLegacyStore(dataDir) || existsSync(path)) return { path, legacy: false };
  return { path: legacy, legacy: true };
}
