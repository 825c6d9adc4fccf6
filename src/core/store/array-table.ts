// Job arrays in the job database (migration 8): the array row and its tasks, each task an ordinary job row.

import type { ArrayEntry, ArrayListFilter, ArrayProgress } from "../model/array-views.ts";
import type { BackendName } from "../model/job.ts";
import type { LaunchRequest } from "../model/service-api.ts";
import { activeTaskIds, arrayProgress, listArrays } from "./array-counts.ts";
import { Table } from "./connection.ts";

export interface ArrayRow {
  array_id: string;
  client_request_id: string | null;
  /** The launch every task was made from (without its index variables), as asked. */
  request: LaunchRequest;
  /** The array as given (`0-99%8`). */
  spec_text: string;
  indices: number[];
  throttle: number;
  backend: BackendName;
  host: string | null;
  /** The array's private queue (local and SSH), of concurrency `throttle`. */
  queue: string | null;
  created_at: string;
}

interface RawRow {
  array_id: string;
  client_request_id: string | null;
  request_json: string;
  spec_text: string;
  indices_json: string;
  throttle: number;
  backend: BackendName;
  host: string | null;
  queue: string | null;
  created_at: string;
}

const COLUMNS =
  "array_id, client_request_id, request_json, spec_text, indices_json, throttle, backend, host, queue, created_at";

function fromRaw(r: RawRow): ArrayRow {
  return {
    array_id: r.array_id,
    client_request_id: r.client_request_id,
    request: JSON.parse(r.request_json) as LaunchRequest,
    spec_text: r.spec_text,
    indices: JSON.parse(r.indices_json) as number[],
    throttle: r.throttle,
    backend: r.backend,
    host: r.host,
    queue: r.queue,
    created_at: r.created_at,
  };
}

/** The job_arrays and job_array_tasks tables. */
export class ArrayTable extends Table {
  get(arrayId: string): ArrayRow | null {
    const r = this.db
      .query(`SELECT ${COLUMNS} FROM job_arrays WHERE array_id = ?`)
      .get(arrayId) as RawRow | null;
    return r ? fromRaw(r) : null;
  }

  byRequestId(clientRequestId: string): ArrayRow | null {
    const r = this.db
      .query(`SELECT ${COLUMNS} FROM job_arrays WHERE client_request_id = ?`)
      .get(clientRequestId) as RawRow | null;
    return r ? fromRaw(r) : null;
  }

  /** Array IDs starting with the prefix (the CLI's unique prefixes), at most `limit`. */
  idsWithPrefix(prefix: string, limit: number): string[] {
    const rows = this.db
      .query("SELECT array_id FROM job_arrays WHERE substr(array_id, 1, ?) = ? ORDER BY array_id LIMIT ?")
      .all(prefix.length, prefix, limit) as { array_id: string }[];
    return rows.map((r) => r.array_id);
  }

  /** Records a new array; false when its client_request_id is taken already (a concurrent submit won). */
  insert(a: ArrayRow): boolean {
    return this.conn.write(() => {
      const r = this.db
        .query(`INSERT OR IGNORE INTO job_arrays (${COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)`)
        .run(
          a.array_id,
          a.client_request_id,
          JSON.stringify(a.request),
          a.spec_text,
          JSON.stringify(a.indices),
          a.throttle,
          a.backend,
          a.host,
          a.queue,
          a.created_at,
        );
      return r.changes === 1;
    });
  }

  addTask(arrayId: string, index: number, jobId: string): void {
    this.conn.write(() => {
      this.db
        .query("INSERT OR IGNORE INTO job_array_tasks (array_id, idx, job_id) VALUES (?,?,?)")
        .run(arrayId, index, jobId);
    });
  }

  /** The array's launched tasks by index, ascending. */
  tasksOf(arrayId: string): { index: number; job_id: string }[] {
    const rows = this.db
      .query("SELECT idx, job_id FROM job_array_tasks WHERE array_id = ? ORDER BY idx")
      .all(arrayId) as { idx: number; job_id: string }[];
    return rows.map((r) => ({ index: r.idx, job_id: r.job_id }));
  }

  /** Which array task a job is, if any. */
  taskOfJob(jobId: string): { array_id: string; index: number } | null {
    const r = this.db.query("SELECT array_id, idx FROM job_array_tasks WHERE job_id = ?").get(jobId) as {
      array_id: string;
      idx: number;
    } | null;
    return r ? { array_id: r.array_id, index: r.idx } : null;
  }

  /** The newest arrays, with their indices (the job IDs a shell completes), at most `limit`. */
  recent(limit: number): { array_id: string; indices: number[] }[] {
    const rows = this.db
      .query("SELECT array_id, indices_json FROM job_arrays ORDER BY array_id DESC LIMIT ?")
      .all(limit) as { array_id: string; indices_json: string }[];
    return rows.map((r) => ({ array_id: r.array_id, indices: JSON.parse(r.indices_json) as number[] }));
  }

  /** The newest arrays that match as listing entries, each with its progress (array-counts.ts). */
  list(filter: ArrayListFilter): ArrayEntry[] {
    return listArrays(this.conn, filter);
  }

  /** The arrays any of these jobs is a task of, with their progress; none for plain jobs. */
  progress(jobIds: string[]): ArrayProgress[] {
    return arrayProgress(this.conn, jobIds);
  }

  /** The job IDs of these arrays' tasks not ended (what a live view waits on). */
  activeTaskIds(arrayIds: string[]): string[] {
    return activeTaskIds(this.conn, arrayIds);
  }
}
