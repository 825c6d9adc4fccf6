// The job IDs a shell completes: recent jobs (not array tasks), arrays, and the task addresses (ARRAY_ID.INDEX) of the
// newest arrays. Read from the store only: completion never reconciles a job or contacts a host.
import type { JobStore } from "../store/job-store.ts";

/** Arrays whose task addresses are offered, and at most this many addresses in all. */
const ARRAYS_WITH_TASKS = 3;
const MAX_TASK_ADDRESSES = 1000;

export function recentJobWords(store: JobStore, limit: number): string[] {
  const jobs = store.list({ limit, withoutArrayTasks: true }).map((j) => j.job_id);
  const arrays = store.arrays.recent(limit);
  const ids = [...jobs, ...arrays.map((a) => a.array_id)].sort((a, b) => b.localeCompare(a)).slice(0, limit);
  const shown = new Set(ids);
  const tasks = arrays
    .filter((a) => shown.has(a.array_id))
    .slice(0, ARRAYS_WITH_TASKS)
    .flatMap((a) => a.indices.map((i) => `${a.array_id}.${i}`))
    .slice(0, MAX_TASK_ADDRESSES);
  return [...ids, ...tasks];
}
