// The durable store (SQLite through sqlite.ts). WAL, busy_timeout, BEGIN IMMEDIATE with retry,
// migrations by PRAGMA user_version. Every state change goes through `transition`.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AwaitlessError, hint } from "../model/errors.ts";
import {
  type AttemptRecord,
  type BackendId,
  isTerminal,
  type JobState,
  type StateChange,
} from "../model/job.ts";
import type { LaunchOwner } from "../rules/launch-owner.ts";
import { canTransition } from "../rules/transitions.ts";
import { freeSpace, isNoSpace } from "../util/no-space.ts";
import { assertTrustedDir } from "../util/trusted-dir.ts";
import { checkOwnRoot } from "./own-root.ts";
import type { ImportedJob } from "./rows.ts";
import {
  type JobRow,
  type ListFilter,
  type NewJob,
  type Reservation,
  rowToJob,
  type StoredJob,
  type TransitionPatch,
} from "./rows.ts";
import { SchedulerRounds } from "./scheduler-rounds.ts";
import { MIGRATIONS } from "./schema.ts";
import { constants, Database, type SQLQueryBindings } from "./sqlite.ts";
import { isBusy, storeError } from "./store-errors.ts";
import { LEGACY_FILE, locateStore, STORE_FILE } from "./store-file.ts";

export type { AttemptRecord } from "../model/job.ts";
export type { ListFilter, NewJob, Reservation, StoredJob, TerminalWrite, TransitionPatch } from "./rows.ts";

export { SCHEMA_VERSION } from "./schema.ts";

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

export class JobStore {
  readonly db: Database;
  readonly path: string;
  /** Set when a write found the disk full and took the reserve's room (the service tells the user once). */
  reserveUsed = false;
  /** Scheduler rounds shared by this machine's processes (one poller per cluster). */
  readonly rounds: SchedulerRounds;

  private constructor(db: Database, path: string) {
    this.db = db;
    this.path = path;
    this.rounds = new SchedulerRounds(
      db,
      (fn) => this.write(fn),
      (fn) => this.read(fn),
    );
  }

  /**
   * Opens (creating if needed) the store in `dataDir`; the directory is 0700 (created so, or an existing one refused
   * unless it is private or already holds an Awaitless store) and the database 0600.
   */
  static open(dataDir: string): JobStore {
    // Another user's directory could hold their bin/wrapper-*.sh or spec.sh: refuse it before anything is made.
    assertTrustedDir(dataDir, "the data directory", "store_unavailable");
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
    assertTrustedDir(dataDir, "the data directory", "store_unavailable");
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
    const store = new JobStore(db, path);
    store.migrate();
    store.keepReserve();
    return store;
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

  private read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw storeError(this.path, e);
    }
  }

  /**
   * Binds client_request_id (if any) to a fingerprint and creates the job row, all in one transaction,
   * before any side effect. The duplicate guard (same active_key still active) is checked in the same
   * transaction unless allowDuplicate.
   */
  reserve(job: NewJob, allowDuplicate: boolean): Reservation {
    return this.write(() => {
      if (job.client_request_id) {
        const prior = this.db
          .query("SELECT * FROM jobs WHERE client_request_id = ?")
          .get(job.client_request_id) as JobRow | null;
        if (prior) {
          const stored = rowToJob(prior);
          return prior.fingerprint === job.fingerprint
            ? { kind: "replay", job: stored }
            : { kind: "conflict", job: stored };
        }
      }
      if (!allowDuplicate) {
        const dup = this.db
          .query(`SELECT * FROM jobs WHERE active_key = ? AND state IN ${ACTIVE_SQL} LIMIT 1`)
          .get(job.active_key) as JobRow | null;
        if (dup) return { kind: "duplicate", job: rowToJob(dup) };
      }
      this.db
        .query(
          `INSERT INTO jobs (job_id, name, backend, host, queue, state, spec_json, fingerprint, client_request_id,
             active_key, created_at, job_dir, launcher_json)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        )
        .run(
          job.job_id,
          job.spec.name,
          job.spec.backend,
          job.spec.host,
          job.spec.queue,
          job.state,
          JSON.stringify(job.spec),
          job.fingerprint,
          job.client_request_id,
          job.active_key,
          job.created_at,
          job.job_dir,
          job.launcher ? JSON.stringify(job.launcher) : null,
        );
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(job.job_id, null, job.state, job.created_at, "created");
      for (const d of job.spec.after ?? []) {
        this.db
          .query("INSERT INTO job_dependencies (job_id, parent_id, condition) VALUES (?,?,?)")
          .run(job.job_id, d.job_id, d.on);
      }
      return { kind: "created", job: this.get(job.job_id)! };
    });
  }

  /**
   * Takes over the launch of a job whose launch owner was `previous` (one BEGIN IMMEDIATE transaction): true for
   * exactly one of any number of concurrent claimants, and only while the job still has no backend identity.
   */
  claimLaunch(jobId: string, previous: LaunchOwner, next: LaunchOwner): boolean {
    return this.write(() => {
      const res = this.db
        .query(
          `UPDATE jobs SET launcher_json = ? WHERE job_id = ? AND launcher_json = ? AND backend_id_json IS NULL
             AND started_at IS NULL AND cancel_requested_at IS NULL AND state IN ('starting', 'queued')`,
        )
        .run(JSON.stringify(next), jobId, JSON.stringify(previous));
      if (res.changes !== 1) return false;
      const row = this.db.query("SELECT state FROM jobs WHERE job_id = ?").get(jobId) as { state: string };
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(jobId, row.state, row.state, next.at, "launch_resumed");
      return true;
    });
  }

  /**
   * Ends attempt `ended.attempt` of an active job and reserves the next one, in one transaction: the ended attempt's
   * record and result are kept (job_attempts), the row then describes the new attempt, queued and unlaunched until
   * `retryAt`. `moved` when another reader got there first; `refused` when the job ended or a cancel came.
   */
  beginRetry(
    jobId: string,
    ended: AttemptRecord,
    next: { job_dir: string; retry_at: string; message: string },
  ): "reserved" | "moved" | "refused" {
    return this.write(() => {
      const row = this.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | null;
      if (!row) return "refused";
      if ((row.attempt ?? 1) !== ended.attempt) return "moved";
      if (row.cancel_requested_at !== null || isTerminal(row.state as JobState)) return "refused";
      this.db
        .query(
          `INSERT INTO job_attempts (job_id, attempt, job_dir, backend_id_json, state, reason, exit_code, signal,
             launched_at, started_at, finished_at, result_json, result_sha256) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        )
        .run(
          jobId,
          ended.attempt,
          ended.job_dir,
          ended.backend_id ? JSON.stringify(ended.backend_id) : null,
          ended.state,
          ended.reason,
          ended.exit_code,
          ended.signal,
          ended.launched_at,
          ended.started_at,
          ended.finished_at,
          ended.result_json,
          ended.result_sha256,
        );
      this.db
        .query(
          `UPDATE jobs SET state = 'queued', attempt = ?, job_dir = ?, backend_id_json = NULL, started_at = NULL,
             launcher_json = NULL, retry_at = ?, status_message = ? WHERE job_id = ?`,
        )
        .run(ended.attempt + 1, next.job_dir, next.retry_at, next.message, jobId);
      const history = this.db.query(
        "INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)",
      );
      history.run(
        jobId,
        row.state,
        ended.state,
        ended.finished_at,
        `attempt ${ended.attempt}: ${ended.reason ?? ended.state}`,
      );
      history.run(
        jobId,
        ended.state,
        "queued",
        nowIso(),
        `retry: attempt ${ended.attempt + 1} at ${next.retry_at}`,
      );
      return "reserved";
    });
  }

  /**
   * Reserves the launch of a retry's attempt for `owner`, exactly once: only while that attempt is unlaunched and
   * unclaimed, its time has come and no cancel was asked for. The job is then `starting` (`queued` with a queue).
   */
  claimRetryLaunch(
    jobId: string,
    attempt: number,
    owner: LaunchOwner,
    state: "starting" | "queued",
  ): boolean {
    return this.write(() => {
      const res = this.db
        .query(
          `UPDATE jobs SET launcher_json = ?, state = ?, retry_at = NULL WHERE job_id = ? AND attempt = ?
             AND launcher_json IS NULL AND backend_id_json IS NULL AND cancel_requested_at IS NULL AND state = 'queued'
             AND retry_at IS NOT NULL AND retry_at <= ?`,
        )
        .run(JSON.stringify(owner), state, jobId, attempt, owner.at);
      if (res.changes !== 1) return false;
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(jobId, "queued", state, owner.at, `attempt ${attempt} launch reserved`);
      return true;
    });
  }

  /** The ended attempts of a retried job, first first (the current attempt is the job row itself). */
  attempts(jobId: string): AttemptRecord[] {
    return this.read(() =>
      (
        this.db.query("SELECT * FROM job_attempts WHERE job_id = ? ORDER BY attempt").all(jobId) as (Omit<
          AttemptRecord,
          "backend_id"
        > & { backend_id_json: string | null })[]
      ).map(({ backend_id_json, ...r }) => ({
        ...r,
        state: r.state as JobState,
        backend_id: backend_id_json ? (JSON.parse(backend_id_json) as BackendId) : null,
      })),
    );
  }

  get(jobId: string): StoredJob | null {
    return this.read(() => {
      const row = this.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | null;
      return row ? rowToJob(row) : null;
    });
  }

  /** Up to `limit` job IDs that start with `prefix` (exact case), by the primary key's order. */
  jobIdsWithPrefix(prefix: string, limit: number): string[] {
    return this.read(() =>
      (
        this.db
          .query("SELECT job_id FROM jobs WHERE job_id >= ? AND job_id < ? ORDER BY job_id DESC LIMIT ?")
          .all(prefix, `${prefix}\u{10FFFF}`, limit) as { job_id: string }[]
      ).map((r) => r.job_id),
    );
  }

  /** How many jobs a listing filter matches, without its limit. */
  count(filter: Omit<ListFilter, "limit">): number {
    const { where, args } = listWhere(filter);
    return this.read(
      () => (this.db.query(`SELECT COUNT(*) AS n FROM jobs ${where}`).get(...args) as { n: number }).n,
    );
  }

  /** Records backend identity without a state change (e.g. the wrapper pid right after spawn). */
  setBackendId(jobId: string, backendId: BackendId): void {
    this.write(() => {
      this.db
        .query("UPDATE jobs SET backend_id_json = ? WHERE job_id = ?")
        .run(JSON.stringify(backendId), jobId);
    });
  }

  setStatusMessage(jobId: string, message: string | null): void {
    this.write(() => {
      this.db
        .query(`UPDATE jobs SET status_message = ? WHERE job_id = ? AND state IN ${ACTIVE_SQL}`)
        .run(message, jobId);
    });
  }

  /** Adds one ended wait to the job's waited time (any state: a wait on a finished job counts too). */
  addWaited(jobId: string, ms: number): void {
    this.write(() => {
      this.db
        .query("UPDATE jobs SET waited_ms = waited_ms + ? WHERE job_id = ?")
        .run(Math.max(0, Math.round(ms)), jobId);
    });
  }

  /** How long the job has been waited on so far, in milliseconds (0 for an unknown job). */
  waitedMs(jobId: string): number {
    return this.read(() => {
      const row = this.db.query("SELECT waited_ms FROM jobs WHERE job_id = ?").get(jobId) as {
        waited_ms: number;
      } | null;
      return row?.waited_ms ?? 0;
    });
  }

  /** Persists cancel intent; returns false when the job is already terminal. */
  requestCancel(jobId: string, at: string): boolean {
    return this.write(() => {
      const res = this.db
        .query(
          `UPDATE jobs SET cancel_requested_at = COALESCE(cancel_requested_at, ?)
           WHERE job_id = ? AND state IN ${ACTIVE_SQL}`,
        )
        .run(at, jobId);
      return res.changes > 0;
    });
  }

  /**
   * Moves a job to `to` if the lifecycle allows it from its current state, re-read inside the transaction.
   * A terminal transition writes the state, its history row, its completion event and the result snapshot
   * in this one transaction, so a racing writer can never overwrite it.
   */
  transition(jobId: string, to: JobState, patch: TransitionPatch = {}): { changed: boolean; job: StoredJob } {
    return this.write(() => {
      const row = this.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | null;
      if (!row) throw new AwaitlessError("not_found", `no job ${jobId}`, hint("find_job_id"));
      const from = row.state as JobState;
      const at = nowIso();
      if (!canTransition(from, to)) {
        if (patch.backend_id && !isTerminal(from)) {
          this.db
            .query("UPDATE jobs SET backend_id_json = ? WHERE job_id = ?")
            .run(JSON.stringify(patch.backend_id), jobId);
        }
        return { changed: false, job: rowToJob(row) };
      }
      const sets: string[] = ["state = ?"];
      const args: SQLQueryBindings[] = [to];
      if (patch.status_message !== undefined) {
        sets.push("status_message = ?");
        args.push(patch.status_message);
      }
      if (patch.started_at && !row.started_at) {
        sets.push("started_at = ?");
        args.push(patch.started_at);
      }
      if (patch.backend_id) {
        sets.push("backend_id_json = ?");
        args.push(JSON.stringify(patch.backend_id));
      }
      if (isTerminal(to)) {
        const t = patch.terminal;
        if (!t) throw new Error("a terminal transition needs its result");
        sets.push(
          "finished_at = ?",
          "exit_code = ?",
          "signal = ?",
          "reason = ?",
          "stdout_bytes = ?",
          "stderr_bytes = ?",
          "result_json = ?",
          "result_sha256 = ?",
          "active_key = NULL",
          "status_message = NULL",
        );
        args.push(
          t.finished_at,
          t.exit_code,
          t.signal,
          t.reason,
          t.stdout_bytes,
          t.stderr_bytes,
          t.result_json,
          t.result_sha256,
        );
      }
      args.push(jobId);
      this.db.query(`UPDATE jobs SET ${sets.join(", ")} WHERE job_id = ?`).run(...args);
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(jobId, from, to, at, patch.historyReason ?? null);
      if (isTerminal(to)) {
        this.db
          .query("INSERT INTO completions (job_id, state, finished_at, observed_at) VALUES (?,?,?,?)")
          .run(jobId, to, patch.terminal!.finished_at, at);
      }
      return {
        changed: true,
        job: rowToJob(this.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow),
      };
    });
  }

  history(jobId: string): StateChange[] {
    return this.read(
      () =>
        this.db
          .query(
            "SELECT seq, from_state, to_state, at, reason FROM state_history WHERE job_id = ? ORDER BY seq",
          )
          .all(jobId) as StateChange[],
    );
  }

  list(filter: ListFilter): StoredJob[] {
    const { where, args } = listWhere(filter);
    const sql = `SELECT * FROM jobs ${where} ORDER BY job_id DESC LIMIT ?`;
    args.push(filter.limit);
    return this.read(() => (this.db.query(sql).all(...args) as JobRow[]).map(rowToJob));
  }

  activeJobIds(): string[] {
    return this.read(() =>
      (
        this.db.query(`SELECT job_id FROM jobs WHERE state IN ${ACTIVE_SQL}`).all() as { job_id: string }[]
      ).map((r) => r.job_id),
    );
  }

  /** Completion events for `jobIds` after cursor `afterSeq`, in cursor order. */
  completionsAfter(
    jobIds: string[],
    afterSeq: number,
    limit: number,
  ): { seq: number; job_id: string; state: JobState; finished_at: string; observed_at: string }[] {
    const marks = jobIds.map(() => "?").join(",");
    return this.read(
      () =>
        this.db
          .query(
            `SELECT seq, job_id, state, finished_at, observed_at FROM completions
             WHERE seq > ? AND job_id IN (${marks}) ORDER BY seq LIMIT ?`,
          )
          .all(afterSeq, ...jobIds, limit) as {
          seq: number;
          job_id: string;
          state: JobState;
          finished_at: string;
          observed_at: string;
        }[],
    );
  }

  /** Terminal jobs eligible for gc: finished before `olderThan`, or beyond the newest `keep` terminal jobs. */
  gcCandidates(olderThan: string | null, keep: number | null): StoredJob[] {
    const ids = new Set<string>();
    const rows: JobRow[] = [];
    this.read(() => {
      if (olderThan) {
        for (const r of this.db
          .query(`SELECT * FROM jobs WHERE state NOT IN ${ACTIVE_SQL} AND finished_at < ?`)
          .all(olderThan) as JobRow[]) {
          if (!ids.has(r.job_id)) {
            ids.add(r.job_id);
            rows.push(r);
          }
        }
      }
      if (keep !== null) {
        for (const r of this.db
          .query(`SELECT * FROM jobs WHERE state NOT IN ${ACTIVE_SQL} ORDER BY job_id DESC LIMIT -1 OFFSET ?`)
          .all(keep) as JobRow[]) {
          if (!ids.has(r.job_id)) {
            ids.add(r.job_id);
            rows.push(r);
          }
        }
      }
    });
    return rows.map(rowToJob);
  }

  /**
   * Claims the automatic gc when the last one started at least `intervalSeconds` ago: records `now` and returns
   * true, atomically, so that of many concurrent clients one starts it. A store that never had one starts its
   * clock here (false). A plain read decides the common case, so launches do not take the write lock for it.
   */
  claimAutoGc(intervalSeconds: number, now: Date = new Date()): boolean {
    // A value that does not parse (edited by hand) counts as due, so the clock restarts instead of stopping.
    const due = (value: string | undefined) => {
      if (value === undefined) return false;
      const at = Date.parse(value);
      return Number.isNaN(at) || now.getTime() - at >= intervalSeconds * 1000;
    };
    const last = this.meta("auto_gc_at");
    if (last !== undefined && !due(last)) return false;
    return this.write(() => {
      const current = this.metaRow("auto_gc_at");
      if (current !== undefined && !due(current)) return false;
      this.setMetaRow("auto_gc_at", now.toISOString());
      return current !== undefined;
    });
  }

  /** A value of store_meta (undefined when unset). */
  meta(key: string): string | undefined {
    return this.read(() => this.metaRow(key));
  }

  setMeta(key: string, value: string): void {
    this.write(() => this.setMetaRow(key, value));
  }

  private metaRow(key: string): string | undefined {
    const row = this.db.query("SELECT value FROM store_meta WHERE key = ?").get(key) as {
      value: string;
    } | null;
    return row?.value;
  }

  private setMetaRow(key: string, value: string): void {
    this.db
      .query(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }

  /** Every job's local directory with its state and finish time (gc's store quota). */
  jobDirs(): { job_id: string; state: JobState; job_dir: string; finished_at: string | null }[] {
    return this.read(
      () =>
        this.db.query("SELECT job_id, state, job_dir, finished_at FROM jobs").all() as {
          job_id: string;
          state: JobState;
          job_dir: string;
          finished_at: string | null;
        }[],
    );
  }

  /** Jobs that depend on `parentId` (--after), each with its condition, oldest first. */
  dependentsOf(parentId: string): { job_id: string; on: string }[] {
    return this.db
      .query('SELECT job_id, condition AS "on" FROM job_dependencies WHERE parent_id = ? ORDER BY job_id')
      .all(parentId) as { job_id: string; on: string }[];
  }

  /** Deletes terminal jobs' rows (history too; completion events stay so cursors remain monotonic). */
  deleteTerminal(jobIds: string[]): number {
    return this.write(() => {
      let n = 0;
      for (const id of jobIds) {
        const res = this.db.query(`DELETE FROM jobs WHERE job_id = ? AND state NOT IN ${ACTIVE_SQL}`).run(id);
        if (res.changes > 0) {
          this.db.query("DELETE FROM state_history WHERE job_id = ?").run(id);
          this.db.query("DELETE FROM job_dependencies WHERE job_id = ?").run(id);
          this.db.query("DELETE FROM job_attempts WHERE job_id = ?").run(id);
          n++;
        }
      }
      return n;
    });
  }

  /** Removes a reserved job whose launch never started a wrapper (its row and history), so nothing is half-made. */
  deleteUnlaunched(jobId: string): boolean {
    return this.write(() => {
      const res = this.db
        .query(`DELETE FROM jobs WHERE job_id = ? AND state IN ${ACTIVE_SQL} AND backend_id_json IS NULL`)
        .run(jobId);
      if (res.changes > 0) {
        this.db.query("DELETE FROM state_history WHERE job_id = ?").run(jobId);
        this.db.query("DELETE FROM job_dependencies WHERE job_id = ?").run(jobId);
      }
      return res.changes > 0;
    });
  }

  /**
   * Adds a job brought from another store (its history; when finished, its completion event and result snapshot)
   * in one transaction; false when a job with that ID is already here (import is idempotent).
   */
  importJob(j: ImportedJob): boolean {
    return this.write(() => this.insertImported(j));
  }

  /**
   * Adds every job `source` yields in ONE transaction (nothing is stored when any of them fails); `each` learns,
   * for each, whether it was added (false: already here). `source` is read again should the transaction be retried
   * (after `start`, which resets what `each` gathered).
   */
  importJobs<T extends { job: ImportedJob }>(
    source: () => Iterable<T>,
    start: () => void,
    each: (item: T, added: boolean) => void,
  ): void {
    this.write(() => {
      start();
      for (const item of source()) each(item, this.insertImported(item.job));
    });
  }

  private insertImported(j: ImportedJob): boolean {
    if (this.db.query("SELECT 1 FROM jobs WHERE job_id = ?").get(j.job_id)) return false;
    this.db
      .query(
        `INSERT INTO jobs (job_id, name, backend, host, queue, state, spec_json, fingerprint, created_at,
             started_at, finished_at, job_dir, backend_id_json, status_message, exit_code, signal, reason,
             stdout_bytes, stderr_bytes, result_json, result_sha256)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      )
      .run(
        j.job_id,
        j.spec.name,
        j.spec.backend,
        j.spec.host,
        j.spec.queue,
        j.state,
        JSON.stringify(j.spec),
        j.fingerprint,
        j.created_at,
        j.started_at,
        j.finished_at,
        j.job_dir,
        JSON.stringify(j.backend_id),
        j.status_message ?? null,
        j.exit_code,
        j.signal,
        j.reason,
        j.stdout_bytes,
        j.stderr_bytes,
        j.result_json,
        j.result_sha256,
      );
    for (const h of j.history) {
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(j.job_id, h.from_state, h.to_state, h.at, h.reason);
    }
    if (isTerminal(j.state)) {
      this.db
        .query("INSERT INTO completions (job_id, state, finished_at, observed_at) VALUES (?,?,?,?)")
        .run(j.job_id, j.state, j.finished_at, nowIso());
    }
    return true;
  }

  countJobs(): number {
    return this.read(() => (this.db.query("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n);
  }
}

export function nowIso(): string {
  return new Date().toISOString();
}

function listWhere(filter: Omit<ListFilter, "limit">): { where: string; args: SQLQueryBindings[] } {
  const where: string[] = [];
  const args: SQLQueryBindings[] = [];
  if (filter.states && filter.states.length > 0) {
    where.push(`state IN (${filter.states.map(() => "?").join(",")})`);
    args.push(...filter.states);
  }
  for (const key of ["name", "host", "queue"] as const) {
    if (filter[key] === undefined) continue;
    where.push(`${key} = ?`);
    args.push(filter[key]);
  }
  if (filter.withoutArrayTasks) where.push("job_id NOT IN (SELECT job_id FROM job_array_tasks)");
  return { where: where.length ? `WHERE ${where.join(" AND ")}` : "", args };
}
