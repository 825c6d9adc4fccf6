// How far each job array a listing touches has got, from the store alone (the listing reconciled its jobs already):
// tasks counted by state, done and failed, so `list` (CLI and MCP) shows an array's progress beside its tasks.
import type { ArrayProgress } from "../model/array-views.ts";
import { isTerminal, type JobState } from "../model/job.ts";
import type { JobStore } from "../store/job-store.ts";

const FAILED: readonly JobState[] = ["failed", "timed_out", "lost"];

/** The arrays any of these jobs is a task of, in the order their tasks first appear; none for plain jobs. */
export function arrayProgress(store: JobStore, jobIds: string[]): ArrayProgress[] {
  const seen = new Set<string>();
  const out: ArrayProgress[] = [];
  const ofJob = store.db.query("SELECT array_id FROM job_array_tasks WHERE job_id = ?");
  for (const id of jobIds) {
    const arrayId = (ofJob.get(id) as { array_id: string } | null)?.array_id;
    if (!arrayId || seen.has(arrayId)) continue;
    seen.add(arrayId);
    const a = store.db
      .query("SELECT spec_text, indices_json FROM job_arrays WHERE array_id = ?")
      .get(arrayId) as { spec_text: string; indices_json: string } | null;
    if (!a) continue;
    const tasks = store.db
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
      failed_indices: tasks.filter((t) => FAILED.includes(t.state)).map((t) => t.idx),
    });
  }
  return out;
}

/**
 * An array's state from its tasks': active while any is (`running` if one runs); then failed if any failed, timed
 * out or was lost, else cancelled if any was, else succeeded. `removedAll`: gc removed every task (each had ended).
 */
export function arrayState(ts: { state: JobState }[], removedAll: boolean): JobState {
  const active = ts.filter((t) => !isTerminal(t.state));
  if (active.length > 0) {
    if (active.some((t) => t.state === "running" || t.state === "stalled")) return "running";
    return active.some((t) => t.state === "starting") ? "starting" : "queued";
  }
  // every task gc removed: each had ended, but no result is left to say how
  if (ts.length === 0) return removedAll ? "lost" : "queued";
  if (ts.some((t) => FAILED.includes(t.state))) return "failed";
  if (ts.some((t) => t.state === "cancelled")) return "cancelled";
  return "succeeded";
}
