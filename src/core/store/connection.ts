// The store's connection to its SQLite file: opened in WAL mode with a busy timeout (0600, in a private data
// directory), migrated by PRAGMA user_version, transactions as BEGIN IMMEDIATE with retry, and the reserve that lets
// results be stored on a full disk. Only the store's tables use it.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AwaitlessError } from "../model/errors.ts";
import { freeSpace, isNoSpace } from "../util/no-space.ts";
import { assertTrustedDir } from "../util/trusted-dir.ts";
import { checkOwnRoot } from "./own-root.ts";
import { MIGRATIONS } from "./schema.ts";
import { constants, Database } from "./sqlite.ts";
import { isBusy, storeError } from "./store-errors.ts";
import { LEGACY_FILE, locateStore, STORE_FILE } from "./store-file.ts";

export const ACTIVE_SQL = "('queued','starting','running','stalled')";

/**
 * Bytes kept in `store.reserve` next to the database while the disk has room. A write that finds the disk full
 * removes it and tries again, so the results of jobs that filled the disk can still be stored (and `gc` can then
 * remove those jobs). Made again by a later open once there is room for it four times over.
 */
export const STORE_RESERVE_BYTES = 256 * 1024;

/** How long a write waits for another process's write lock before giving up (ms). */
const BUSY_TIMEOUT_MS = Number(process.env.AWAITLESS_BUSY_TIMEOUT_MS) || 10_000;

/** Opens our database at `path` (0600 when created here) in WAL mode with a busy timeout. */
function openAt(path: string, create: boolean): Database {
  const fresh = !existsSync(path);
  const db = new Database(path, { create, readwrite: true, strict: true });
  try {
    if (fresh) chmodSync(path, 0o600);
    db.exec(`PRAGMA busy_timeout = ${Math.min(BUSY_TIMEOUT_MS, 5000)}`);
    // Several processes may create the store at once: switching it to WAL can report busy; retry briefly.
    for (const deadline = Date.now() + BUSY_TIMEOUT_MS; ; ) {
      try {
        db.exec("PRAGMA journal_mode = WAL");
        break;
      } catch (e) {
        if (!isBusy(e) || Date.now() > deadline) throw e;
        Bun.sleepSync(5 + Math.floor(Math.random() * 20));
      }
    }
    // Keep -wal and -shm when the last connection closes: a later reader then needs no new file (and no free
    // block) to open the store, so reads keep working on a full disk.
    db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    db.exec("PRAGMA journal_size_limit = 1048576"); // a kept -wal is cut back to 1 MiB after a checkpoint
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

function movedFromLegacy(dataDir: string): boolean {
  return !existsSync(join(dataDir, LEGACY_FILE)) || existsSync(join(dataDir, STORE_FILE));
}

export class Connection {
  readonly db: Database;
  readonly path: string;
  /** Set when a write found the disk full and took the reserve's room (the service tells the user once). */
  reserveUsed = false;

  private constructor(db: Database, path: string) {
    this.db = db;
    this.path = path;
  }

  /**
   * Opens (creating if needed) the store in `dataDir`; the directory is 0700 (created so, or an existing one refused
   * unless it is private or already holds an Awaitless store) and the database 0600.
   */
  static open(dataDir: string): Connection {
    // Another user's directory could hold their bin/wrapper-*.sh or spec.sh: refuse it before anything is made.
    const existed = assertTrustedDir(dataDir, "the data directory", "store_unavailable");
    // Never a shared directory, and never one whose mode we would change without having made it.
    const makePrivate = checkOwnRoot(
      dataDir,
      "the data directory",
      "set AWAITLESS_DATA_DIR (or data_dir in the config) to a directory of its own",
      "store_unavailable",
    );
    try {
      mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      if (makePrivate) chmodSync(dataDir, 0o700);
    } catch (e) {
      throw new AwaitlessError(
        "store_unavailable",
        `cannot create or use the data directory ${dataDir}: ${(e as Error).message}`,
        "set AWAITLESS_DATA_DIR to a writable directory you own",
        {},
        e,
      );
    }
    // what was made or changed here is checked again (the first check stopped where the path did not exist yet)
    if (!existed || makePrivate) assertTrustedDir(dataDir, "the data directory", "store_unavailable");
    const located = locateStore(dataDir);
    let path = located.path;
    let db: Database;
    try {
      db = openAt(path, !located.legacy);
      if (located.legacy && movedFromLegacy(dataDir)) {
        db.close();
        throw new Error("moved while opening");
      }
    } catch (e) {
      // our old-name store was moved to its new name by another process meanwhile: open it there, never by both names
      if (!located.legacy || !movedFromLegacy(dataDir)) throw storeError(path, e);
      path = join(dataDir, STORE_FILE);
      try {
        db = openAt(path, true);
      } catch (e2) {
        throw storeError(path, e2);
      }
    }
    const conn = new Connection(db, path);
    conn.migrate();
    conn.keepReserve();
    return conn;
  }

  private get reservePath(): string {
    return join(this.path, "..", "store.reserve");
  }

  /** Makes store.reserve when it is missing and the disk has room for it four times over; never fails. */
  private keepReserve(): void {
    const path = this.reservePath;
    if (existsSync(path)) return;
    const room = freeSpace(path);
    if (room === null || room.free < 4 * STORE_RESERVE_BYTES) return;
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, new Uint8Array(STORE_RESERVE_BYTES), { mode: 0o600 });
      renameSync(tmp, path);
    } catch {
      rmSync(tmp, { force: true });
    }
  }

  /** Gives the reserve's space to the database; false when there was none left to give. */
  private releaseReserve(): boolean {
    try {
      rmSync(this.reservePath);
      this.reserveUsed = true;
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.db.close();
  }

  private migrate(): void {
    const version = (this.db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (version > MIGRATIONS.length) {
      throw new AwaitlessError(
        "store_unavailable",
        `the database ${this.path} was written by a newer Awaitless (schema ${version}, this one knows ${MIGRATIONS.length})`,
        "upgrade awaitless, or point AWAITLESS_DATA_DIR at another directory",
      );
    }
    for (let v = version; v < MIGRATIONS.length; v++) {
      this.write(() => {
        const now = (this.db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
        if (now !== v) return; // another process migrated meanwhile
        this.db.exec(MIGRATIONS[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
      });
    }
  }

  /** Runs `fn` inside BEGIN IMMEDIATE, retrying when another process holds the write lock. */
  write<T>(fn: () => T): T {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (;;) {
      try {
        this.db.exec("BEGIN IMMEDIATE");
      } catch (e) {
        if (isBusy(e) && Date.now() < deadline) {
          Bun.sleepSync(5 + Math.floor(Math.random() * 20));
          continue;
        }
        throw storeError(this.path, e);
      }
      try {
        const out = fn();
        this.db.exec("COMMIT");
        return out;
      } catch (e) {
        try {
          this.db.exec("ROLLBACK");
        } catch {
          // the transaction may already be gone
        }
        if (isBusy(e) && Date.now() < deadline) continue;
        if (!(e instanceof AwaitlessError) && isNoSpace(e) && this.releaseReserve()) continue;
        if (e instanceof AwaitlessError) throw e;
        throw storeError(this.path, e);
      }
    }
  }

  read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw storeError(this.path, e);
    }
  }
}

export function nowIso(): string {
  return new Date().toISOString();
}

/** A table's owner: its statements run on the store's one connection, writes in its BEGIN IMMEDIATE with retry. */
export abstract class Table {
  constructor(protected readonly conn: Connection) {}

  protected get db(): Database {
    return this.conn.db;
  }

  protected write<T>(fn: () => T): T {
    return this.conn.write(fn);
  }

  protected read<T>(fn: () => T): T {
    return this.conn.read(fn);
  }
}
