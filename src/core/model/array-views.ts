// What array answers hold (submit, status, wait, cancel of a job array); core/arrays/array-service.ts makes them.
import { isTerminal, type JobState } from "./job.ts";
import type { listStates } from "./list-states.ts";

/** One task as array answers list it. */
export interface ArrayTaskView {
  index: number;
  job_id: string;
  state: JobState;
  exit_code: number | null;
  reason: string | null;
}

/** What status, wait and submit say of an array: its tasks counted by state, the indices that failed. */
export interface ArrayView {
  job_id: string;
  /** The array as given, e.g. `0-99%8`. */
  array: string;
  /** At most this many tasks run at once (%N; every task when not given). */
  throttle: number;
  name: string | null;
  backend: string;
  host: string | null;
  argv: string[];
  created_at: string;
  /** The array's state: active while any task is; else failed if any task failed, timed out or was lost; else cancelled if any was; else succeeded. */
  state: JobState;
  tasks: number;
  counts: Partial<Record<JobState, number>>;
  /** Indices of tasks that ended failed, timed_out or lost. */
  failed_indices: number[];
  cancelled_indices: number[];
  /** Tasks not recorded yet (a launch that stopped part-way: submitting again with its client_request_id resumes it). */
  unlaunched_indices?: number[];
  /** Finished tasks gc has removed since (their results are gone). */
  removed_indices?: number[];
}

export interface ArraySubmitResponse extends ArrayView {
  idempotent_replay: boolean;
}

export type ArrayWaitResponse = ArrayView & {
  job_state: JobState;
  wait_state: "complete" | "client_timeout";
  delivery_state: "delivered" | "pending";
  waited_seconds: number;
};

export interface ArrayCancelResponse {
  job_id: string;
  job_state: JobState;
  cancel_requested: number;
  already_terminal: number;
  array: ArrayView;
}

/** The ends that make an array task failed (an array with one ends failed). */
export const FAILED_STATES: readonly JobState[] = ["failed", "timed_out", "lost"];
const FAILED = FAILED_STATES;

/** One array in a listing: its progress and what a row shows of it (name, target, command, when). */
export interface ArrayEntry extends ArrayProgress {
  kind: "array";
  name: string | null;
  backend: string;
  host: string | null;
  argv: string[];
  created_at: string;
}

export interface ArrayListFilter {
  /** As a listing's (`active`, `failed`, …): an array matches when one of its tasks is in one of those states. */
  state?: Parameters<typeof listStates>[0];
  name?: string;
  host?: string;
  /** Arrays run in private queues: a queue filter leaves every array out. */
  queue?: string;
  limit: number;
}

/** One array's progress: `done` of `tasks` ended, counted by state, the failed indices. */
export type ArrayProgress = Pick<
  ArrayView,
  "job_id" | "array" | "state" | "tasks" | "counts" | "failed_indices"
> & {
  done: number;
};

/** `6/10 done (5 succeeded, 1 failed), 1 running, 3 queued`: an array's progress in a few words. */
export function progressWords(p: ArrayProgress): string {
  const ended = Object.entries(p.counts)
    .filter(([s]) => isTerminal(s as JobState))
    .map(([s, n]) => `${n} ${s}`);
  const active = Object.entries(p.counts)
    .filter(([s]) => !isTerminal(s as JobState))
    .map(([s, n]) => `${n} ${s}`);
  const failed = p.failed_indices.length > 0 ? `; failed indices ${p.failed_indices.join(",")}` : "";
  return (
    [`${p.done}/${p.tasks} done${ended.length ? ` (${ended.join(", ")})` : ""}`, ...active].join(", ") +
    failed
  );
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
