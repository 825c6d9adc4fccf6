// What array answers hold (submit, status, wait, cancel of a job array); core/arrays/array-service.ts makes them.
import type { JobState } from "./job.ts";

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
