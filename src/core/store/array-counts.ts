// Job arrays counted from their tasks' rows: a listing's entries, newest first, each with its progress counted in SQL
// (job_array_tasks' primary key and job_id index, jobs' primary key), so a window counts arrays, not tasks; the
// progress of the arrays a job listing touches; the tasks not ended. Read from the store alone.
import {
  type ArrayEntry,
  type ArrayListFilter,
  type ArrayProgress,
  arrayState,
  FAILED_STATES,
} from "../model/array-views.ts";
import { isTerminal, type JobState } from "../model/job.ts";
import { listStates } from "../model/list-states.ts";
import { ACTIVE_SQL, type Connection } from "./connection.ts";

interface Row {
  array_id: string;
  spec_text: string;
  indices_json: string;
  request_json: string;
  backend: string;
  host: string | null;
  created_at: string;
}

const FAILED_SQL = "('failed','timed_out','lost')";

/** The newest arrays that match, at most `limit`, read a page of arrays at a time. */
export function listArrays(conn: Connection, filter: ArrayListFilter): ArrayEntry[] {
  const states = listStates(filter.state);
  if (filter.queue !== undefined) return [];
  const out: ArrayEntry[] = [];
  const page = Math.max(filter.limit, 50);
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (filter.host !== undefined) {
    where.push("host = ?");
    args.push(filter.host);
  }
  if (filter.name !== undefined) {
    where.push("json_extract(request_json, '$.name') = ?");
    args.push(filter.name);
  }
  const sql = `SELECT array_id, spec_text, indices_json, request_json, backend, host, created_at FROM job_arrays
    ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY array_id DESC LIMIT ? OFFSET ?`;
  for (let offset = 0; out.length < filter.limit; offset += page) {
    const rows = conn.db.query(sql).all(...args, page, offset) as Row[];
    for (const e of entries(conn, rows)) {
      if (out.length >= filter.limit) break;
      if (!states || states.some((s) => (e.counts[s] ?? 0) > 0)) out.push(e);
    }
    if (rows.length < page) break;
  }
  return out;
}

function entries(conn: Connection, rows: Row[]): ArrayEntry[] {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.array_id);
  const marks = ids.map(() => "?").join(",");
  const counted = conn.db
    .query(
      `SELECT t.array_id, j.state, COUNT(*) AS n FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
       WHERE t.array_id IN (${marks}) GROUP BY t.array_id, j.state`,
    )
    .all(...ids) as { array_id: string; state: JobState; n: number }[];
  const failed = conn.db
    .query(
      `SELECT t.array_id, t.idx FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
       WHERE t.array_id IN (${marks}) AND j.state IN ${FAILED_SQL} ORDER BY t.idx`,
    )
    .all(...ids) as { array_id: string; idx: number }[];
  return rows.map((r) => {
    const counts: Partial<Record<JobState, number>> = {};
    for (const c of counted) if (c.array_id === r.array_id) counts[c.state] = c.n;
    const states = Object.entries(counts).flatMap(([s, n]) => Array(n).fill({ state: s as JobState }));
    const request = JSON.parse(r.request_json) as { name?: string; argv: string[] };
    return {
      kind: "array",
      job_id: r.array_id,
      array: r.spec_text,
      state: arrayState(states, false),
      tasks: (JSON.parse(r.indices_json) as number[]).length,
      done: Object.entries(counts)
        .filter(([s]) => isTerminal(s as JobState))
        .reduce((a, [, n]) => a + (n ?? 0), 0),
      counts,
      failed_indices: failed.filter((f) => f.array_id === r.array_id).map((f) => f.idx),
      name: request.name ?? null,
      backend: r.backend,
      host: r.host,
      argv: request.argv,
      created_at: r.created_at,
    };
  });
}

/** The job IDs of these arrays' tasks not ended (what a live view waits on). */
export function activeTaskIds(conn: Connection, arrayIds: string[]): string[] {
  if (arrayIds.length === 0) return [];
  const rows = conn.db
    .query(
      `SELECT t.job_id FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
       WHERE t.array_id IN (${arrayIds.map(() => "?").join(",")}) AND j.state IN ${ACTIVE_SQL}`,
    )
    .all(...arrayIds) as { job_id: string }[];
  return rows.map((r) => r.job_id);
}

/** The arrays any of these jobs is a task of, in the order their tasks first appear; none for plain jobs. */
export function arrayProgress(conn: Connection, jobIds: string[]): ArrayProgress[] {
  const seen = new Set<string>();
  const out: ArrayProgress[] = [];
  const ofJob = conn.db.query("SELECT array_id FROM job_array_tasks WHERE job_id = ?");
  for (const id of jobIds) {
    const arrayId = (ofJob.get(id) as { array_id: string } | null)?.array_id;
    if (!arrayId || seen.has(arrayId)) continue;
    seen.add(arrayId);
    const a = conn.db
      .query("SELECT spec_text, indices_json FROM job_arrays WHERE array_id = ?")
      .get(arrayId) as { spec_text: string; indices_json: string } | null;
    if (!a) continue;
    const tasks = conn.db
      .query(
        `SELECT t.idx, j.state FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
         WHERE t.array_id = ? ORDER BY t.idx`,
      )
      .all(arrayId) as { idx: number; state: JobState }[];
    const counts: Partial<Record<JobState, number>> = {};
    for (const t of tasks) counts[t.state] = (counts[t.state] ?? 0) + 1;
    const active = tasks.filter((t) => !isTerminal(t.state));
    out.push({
      job_id: arrayId,
      array: a.spec_text,
      state: arrayState(tasks, false),
      tasks: (JSON.parse(a.indices_json) as number[]).length,
      done: tasks.length - active.length,
      counts,
      failed_indices: tasks.filter((t) => FAILED_STATES.includes(t.state)).map((t) => t.idx),
    });
  }
  return out;
}
