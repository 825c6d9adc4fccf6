// The durable store: the jobs table (reserve exactly once, every state change through `transition`, reads) over its
// connection (connection.ts), and the store's other tables: attempts, queues, arrays, meta, gc, imports, rounds.
import type { BackendId, JobState, StateChange } from "../model/job.ts";
import type { LaunchOwner } from "../rules/launch-owner.ts";
import { ArrayTable } from "./array-table.ts";
import { AttemptTable } from "./attempt-table.ts";
import { ACTIVE_SQL, Connection, Table } from "./connection.ts";
import { GcTable } from "./gc-table.ts";
import { ImportTable } from "./import-table.ts";
import { reserveJob, transitionJob } from "./job-writes.ts";
import { MetaTable } from "./meta-table.ts";
import { QueueTable } from "./queue-table.ts";
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
import type { SQLQueryBindings } from "./sqlite.ts";

export type { AttemptRecord } from "../model/job.ts";
export { ACTIVE_SQL, nowIso, STORE_RESERVE_BYTES } from "./connection.ts";
export type { ListFilter, NewJob, Reservation, StoredJob, TerminalWrite, TransitionPatch } from "./rows.ts";
export { SCHEMA_VERSION } from "./schema.ts";

export class JobStore extends Table {
  readonly path: string;
  /** Scheduler rounds shared by this machine's processes (one poller per cluster). */
  readonly rounds: SchedulerRounds;
  /** A retried job's ended attempts and its next one's launch. */
  readonly attempts: AttemptTable;
  /** Named queues (and arrays' private ones). */
  readonly queues: QueueTable;
  /** Job arrays: the array rows, their tasks, and their progress counted from the tasks' rows. */
  readonly arrays: ArrayTable;
  readonly meta: MetaTable;
  readonly gc: GcTable;
  /** Jobs brought from an Awaitless 0.8 store. */
  readonly imports: ImportTable;

  private constructor(conn: Connection) {
    super(conn);
    this.path = conn.path;
    this.rounds = new SchedulerRounds(conn);
    this.attempts = new AttemptTable(conn);
    this.queues = new QueueTable(conn);
    this.arrays = new ArrayTable(conn);
    this.meta = new MetaTable(conn);
    this.gc = new GcTable(conn);
    this.imports = new ImportTable(conn);
  }

  /**
   * Opens (creating if needed) the store in `dataDir`; the directory is 0700 (created so, or an existing one refused
   * unless it is private or already holds an Awaitless store) and the database 0600.
   */
  static open(dataDir: string): JobStore {
    return new JobStore(Connection.open(dataDir));
  }

  /** True once after a write found the disk full and took the reserve's room (the service then says so, once). */
  takeReserveUsed(): boolean {
    const used = this.conn.reserveUsed;
    this.conn.reserveUsed = false;
    return used;
  }

  close(): void {
    this.conn.db.close();
  }

  /** A consistent copy of the whole store into a new database file (benches give each server its own). */
  copyTo(path: string): void {
    this.db.query("VACUUM INTO ?").run(path);
  }

  /** Binds client_request_id to a fingerprint and creates the job row before any side effect (job-writes.ts). */
  reserve(job: NewJob, allowDuplicate: boolean): Reservation {
    return reserveJob(this.conn, job, allowDuplicate);
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
  /** Moves a job to `to` if the lifecycle allows it, with its result when terminal (job-writes.ts). */
  transition(jobId: string, to: JobState, patch: TransitionPatch = {}): { changed: boolean; job: StoredJob } {
    return transitionJob(this.conn, jobId, to, patch);
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

  /** Jobs that depend on `parentId` (--after), each with its condition, oldest first. */
  dependentsOf(parentId: string): { job_id: string; on: string }[] {
    return this.db
      .query('SELECT job_id, condition AS "on" FROM job_dependencies WHERE parent_id = ? ORDER BY job_id')
      .all(parentId) as { job_id: string; on: string }[];
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
