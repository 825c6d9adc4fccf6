// The private queues of job arrays (`array.<ARRAY_ID>`): telling them from named queues, refusing them to queue
// commands and to other jobs, and removing an ended array's queue row (by whichever reader looks next: restart-safe).
import { AwaitlessError, hint } from "../model/errors.ts";
import type { JobSpec } from "../model/job.ts";
import { arrayOfQueue, ARRAY_QUEUE_PREFIX as PREFIX } from "../model/queue-names.ts";
import { ACTIVE_SQL, type JobStore } from "../store/job-store.ts";

/** `queue create` of an `array.*` name: such names belong to arrays (made by --array …%N, removed when it ends). */
export function refuseArrayQueueCreate(name: string): void {
  const arrayId = arrayOfQueue(name);
  if (arrayId === undefined) return;
  throw new AwaitlessError(
    "invalid_argument",
    `queue names starting with "array." are reserved: ${name} is the private queue of job array ${arrayId}, made by --array …%N and removed when the array ends`,
    hint("array_queue_private", { job_id: arrayId }),
    { queue: name },
  );
}

/** A job naming an array's queue that is not one of that array's tasks would take the array's slots: refused. */
export function refuseForeignArrayQueue(spec: Pick<JobSpec, "queue" | "env">): void {
  const arrayId = spec.queue === null ? undefined : arrayOfQueue(spec.queue);
  if (arrayId === undefined || spec.env.AWAITLESS_ARRAY_ID === arrayId) return;
  throw new AwaitlessError(
    "invalid_argument",
    `queue ${spec.queue} is the private queue of job array ${arrayId}: only its tasks run there`,
    hint("array_queue_private", { job_id: arrayId }),
    { queue: spec.queue },
  );
}

interface ArrayQueueRow {
  name: string;
  target: string;
  indices_json: string | null;
  launched: number;
  active: number;
}

/**
 * Removes the queue rows of arrays that ended: every index launched and no task active (a task gc removed counts as
 * ended). An array still launching, or whose submit stopped part-way, keeps its queue (a replay launches the rest).
 * Returns how many rows it removed.
 */
export function removeEndedArrayQueues(store: JobStore): number {
  const rows = store.db
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
  return store.write(() => {
    let removed = 0;
    for (const r of ended) {
      // checked again inside the write: a retry may have made a task active meanwhile
      const still = store.db
        .query(
          `SELECT count(*) AS n FROM job_array_tasks t JOIN jobs j ON j.job_id = t.job_id
           WHERE t.array_id = ? AND j.state IN ${ACTIVE_SQL}`,
        )
        .get(arrayOfQueue(r.name)!) as { n: number };
      if (still.n > 0) continue;
      removed += store.db
        .query("DELETE FROM queues WHERE name = ? AND target = ?")
        .run(r.name, r.target).changes;
    }
    return removed;
  });
}
