// What a read reports when the store cannot record what it observed (a full disk or a spent quota): the job as
// observed, in memory only. The wrapper's records stay on disk, so the next reader with room stores (seals) it.
import type { JobState } from "../model/job.ts";
import type { BuiltResult } from "../results/result-builder.ts";
import type { Decision } from "../rules/reconcile.ts";
import type { StoredJob } from "../store/job-store.ts";

type TerminalDecision = Extract<Decision, { kind: "terminal" }>;

/** The terminal job a reader reports when its terminal transition could not be written. */
export function observedTerminal(job: StoredJob, d: TerminalDecision, built: BuiltResult): StoredJob {
  return {
    ...job,
    state: d.to,
    started_at: job.started_at ?? d.started_at,
    finished_at: d.finished_at,
    exit_code: d.exit_code,
    signal: d.signal,
    reason: d.reason,
    status_message: null,
    stdout_bytes: built.stdoutBytes,
    stderr_bytes: built.stderrBytes,
    result_json: built.json,
  };
}

/** The active job a reader reports when a state or status change could not be written. */
export function observedActive(
  job: StoredJob,
  to: JobState,
  statusMessage: string | null,
  startedAt?: string,
): StoredJob {
  return {
    ...job,
    state: to,
    status_message: statusMessage,
    started_at: job.started_at ?? startedAt ?? null,
  };
}

/** The warning a surface shows once when observations could not be stored. */
export function storeNotice(storePath: string, cause: string): string {
  return (
    `the job database ${storePath} could not be updated (${cause}); ` +
    "states and results above come from the jobs' own records on disk and are stored by the next command that has room"
  );
}

/** The warning a surface shows once when the store took its reserve: the disk is full, results were still stored. */
export function reserveNotice(storePath: string, free: string): string {
  return (
    `the disk holding the job database ${storePath} is full (${free}): results were stored in its reserve, and ` +
    "jobs writing there may have lost output; free space (awaitless gc removes finished jobs, or lower log_cap_bytes)"
  );
}
