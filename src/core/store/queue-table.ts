// Named queues in the job database (migration 2): create (idempotent for the same concurrency), change, delete, look
// up, list.
import { AwaitlessError, hint, invalid } from "../model/errors.ts";
import { arrayOfQueue, ARRAY_QUEUE_PREFIX as PREFIX, QUEUE_NAME_RE } from "../model/queue-names.ts";
import { ACTIVE_SQL, nowIso, Table } from "./connection.ts";

export interface QueueRow {
  name: string;
  target: string;
  concurrency: number;
  created_at: string;
}

/** Most jobs one queue may run at once (a guard against typos, not a resource limit). */
export const MAX_CONCURRENCY = 10_000;

/** The target of a job or queue: "local", or the host name. */
export function targetOf(host: string | null | undefined): string {
  return host ? host : "local";
}

export function checkQueueName(name: string): void {
  if (!QUEUE_NAME_RE.test(name)) {
    throw invalid(
      `bad queue name ${JSON.stringify(name)}`,
      "queue names are 1–64 characters from A-Z a-z 0-9 . _ -",
    );
  }
}

function checkConcurrency(name: string, concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw invalid(
      `bad concurrency ${JSON.stringify(concurrency)} for queue ${name}`,
      hint("queue_concurrency_range", { max: MAX_CONCURRENCY }),
    );
  }
}

interface ArrayQueueRow {
  name: string;
  target: string;
  indices_json: string | null;
  launched: number;
  active: number;
}

/** The queues table: named queues per target, and arrays' private ones. */
export class QueueTable extends Table {
  /** Creates the queue, or returns it when it exists with the same concurrency; another concurrency is refused. */
  create(name: string, target: string, concurrency: number): { row: QueueRow; created: boolean } {
    checkQueueName(name);
    checkConcurrency(name, concurrency);
    return this.conn.write(() => {
      const prior = this.find(name, target);
      if (prior) {
        if (prior.concurrency !== concurrency) {
          throw new AwaitlessError(
            "invalid_argument",
            `queue ${name} on ${target} already exists with concurrency ${prior.concurrency} (asked: ${concurrency})`,
            hint("queue_use_existing", { name, concurrency: prior.concurrency }),
            { queue: name, target, concurrency: prior.concurrency },
          );
        }
        return { row: prior, created: false };
      }
      const row: QueueRow = { name, target, concurrency, created_at: nowIso() };
      this.db
        .query("INSERT INTO queues (name, target, concurrency, created_at) VALUES (?,?,?,?)")
        .run(row.name, row.target, row.concurrency, row.created_at);
      return { row, created: true };
    });
  }

  private find(name: string, target: string): QueueRow | null {
    return this.db
      .query("SELECT name, target, concurrency, created_at FROM queues WHERE name = ? AND target = ?")
      .get(name, target) as QueueRow | null;
  }

  /** The queue a job names, or an error saying how to create it. */
  require(name: string, target: string): QueueRow {
    const row = this.find(name, target);
    if (!row) {
      throw new AwaitlessError(
        "not_found",
        `there is no queue ${name} on ${target}`,
        hint("queue_create_first", { name, target }),
        {
          queue: name,
          target,
        },
      );
    }
    return row;
  }

  /** Jobs of the queue on its target that have not ended, as waiting (queued, starting) and running. */
  private activeIn(name: string, target: string): { waiting: number; running: number } {
    const rows = this.db
      .query(
        `SELECT state, count(*) AS n FROM jobs WHERE queue = ? AND coalesce(host, 'local') = ? AND state IN ${ACTIVE_SQL} GROUP BY state`,
      )
      .all(name, target) as { state: string; n: number }[];
    const waiting = rows.filter((r) => r.state === "queued" || r.state === "starting");
    return {
      waiting: waiting.reduce((a, r) => a + r.n, 0),
      running: rows.reduce((a, r) => a + r.n, 0) - waiting.reduce((a, r) => a + r.n, 0),
    };
  }

  /**
   * Changes a queue's concurrency. Jobs launched from now on are admitted by it; a job already in line keeps the value
   * it was launched with until it starts (its wrapper holds it), so `waiting` says how many do.
   */
  setConcurrency(
    name: string,
    target: string,
    concurrency: number,
  ): { row: QueueRow; previous: number; waiting: number } {
    checkConcurrency(name, concurrency);
    return this.conn.write(() => {
      const prior = this.require(name, target);
      this.db
        .query("UPDATE queues SET concurrency = ? WHERE name = ? AND target = ?")
        .run(concurrency, name, target);
      return {
        row: { ...prior, concurrency },
        previous: prior.concurrency,
        waiting: this.activeIn(name, target).waiting,
      };
    });
  }

  /** Removes a queue that no unfinished job uses (else refused, naming how many wait or run in it). */
  delete(name: string, target: string): QueueRow {
    return this.conn.write(() => {
      const row = this.require(name, target);
      const { waiting, running } = this.activeIn(name, target);
      if (waiting + running > 0)
        throw new AwaitlessError(
          "invalid_argument",
          `queue ${name} on ${target} is in use: ${running} job(s) running, ${waiting} waiting`,
          hint("queue_in_use", { name, target }),
          { queue: name, target, running, waiting },
        );
      this.db.query("DELETE FROM queues WHERE name = ? AND target = ?").run(name, target);
      return row;
    });
  }

  list(target?: string): QueueRow[] {
    const sql = "SELECT name, target, concurrency, created_at FROM queues";
    return (
      target === undefined
        ? this.db.query(`${sql} ORDER BY target, name`).all()
        : this.db.query(`${sql} WHERE target = ? ORDER BY name`).all(target)
    ) as QueueRow[];
  }

  /** Mean runtime (seconds) of the queue's last `sample` finished jobs that ran; null without history. */
  meanRuntimeSeconds(name: string, host: string | null, sample = 20): number | null {
    const rows = this.db
      .query(
        `SELECT started_at, finished_at FROM jobs
         WHERE queue = ? AND host IS ? AND started_at IS NOT NULL AND finished_at IS NOT NULL
         ORDER BY job_id DESC LIMIT ?`,
      )
      .all(name, host, sample) as { started_at: string; finished_at: string }[];
    const secs = rows
      .map((r) => (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000)
      .filter((s) => Number.isFinite(s) && s >= 0);
    if (secs.length === 0) return null;
    return Math.round((secs.reduce((a, b) => a + b, 0) / secs.length) * 10) / 10;
  }

  /**
   * Removes the queue rows of arrays that ended: every index launched and no task active (a task gc removed counts as
   * ended). An array still launching, or whose submit stopped part-way, keeps its queue (a replay launches the rest).
   * Returns how many rows it removed.
   */
  removeEndedArrayQueues(): number {
    const rows = this.db
      .query(
        `SELECT q.name, q.target, a.indices_json,
           (SELECT count(*) FROM job_array_tasks t WHERE t.array_id = a.array_id) AS launched,
           (SELECT count(*) FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
              WHERE t.array_id = a.array_id AND j.state IN ${ACTIVE_SQL}) AS active
         FROM queues q LEFT JOIN job_arrays a ON a.array_id = substr(q.name, ${PREFIX.length + 1})
         WHERE substr(q.name, 1, ${PREFIX.length}) = '${PREFIX}'`,
      )
      .all() as ArrayQueueRow[];
    const ended = rows.filter(
      (r) =>
        r.indices_json !== null &&
        r.active === 0 &&
        r.launched >= (JSON.parse(r.indices_json) as number[]).length,
    );
    if (ended.length === 0) return 0;
    return this.conn.write(() => {
      let removed = 0;
      for (const r of ended) {
        // checked again inside the write: a retry may have made a task active meanwhile
        const still = this.db
          .query(
            `SELECT count(*) AS n FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
             WHERE t.array_id = ? AND j.state IN ${ACTIVE_SQL}`,
          )
          .get(arrayOfQueue(r.name)!) as { n: number };
        if (still.n > 0) continue;
        removed += this.db
          .query("DELETE FROM queues WHERE name = ? AND target = ?")
          .run(r.name, r.target).changes;
      }
      return removed;
    });
  }
}
