// The Decisions the scheduler rules of src/core/rules/reconcile.ts reach, worded: which fields, which error, which hint. Pure.

import { type Decision, err, lostDecision, type TerminalDecision } from "../model/decision.ts";
import type { Job } from "../model/job.ts";
import type { Observation } from "../model/observation.ts";
import type { SchedulerEnd, SchedulerFacts } from "../model/scheduler-facts.ts";

type Base = Omit<TerminalDecision, "to" | "reason" | "error">;

/** The state stays; the status message says why. */
export function keep(job: Job, message: string): Decision {
  return { kind: "active", to: job.state, status_message: message };
}

/** A terminal outcome's common fields: the wrapper's record first, then the scheduler's exit and times. */
export function endBase(job: Job, obs: Observation, s: SchedulerFacts, nowMs: number): Base {
  const x = obs.exit;
  const code = x
    ? { exit_code: x.exit_code, signal: x.signal }
    : s.exit
      ? { exit_code: s.exit.exit_code, signal: s.exit.signal }
      : { exit_code: null, signal: null };
  return {
    kind: "terminal",
    ...code,
    finished_at: x?.finished_at ?? s.ended_at ?? new Date(nowMs).toISOString(),
    started_at: obs.started?.started_at ?? s.started_at ?? job.started_at,
    descendants_alive: x?.descendants_alive ?? false,
    ...(x?.leftovers ? { leftovers: x.leftovers } : {}),
    ...(x?.resources ? { resources: x.resources } : {}),
  };
}

export function cancelledByScheduler(job: Job, base: Base, s: SchedulerFacts): Decision {
  const detail =
    job.cancel_requested_at !== null ? s.message : `${s.message}; the cancel did not come from Awaitless`;
  return {
    ...base,
    to: "cancelled",
    reason: "cancelled",
    error: err("cancelled", "cancelled", false, "resubmit the command if it still needs to run", detail),
  };
}

export function timedOutByScheduler(base: Base, s: SchedulerFacts, end: SchedulerEnd): Decision {
  return {
    ...base,
    to: "timed_out",
    reason: end,
    error: err("timed_out", `${s.words.time_limit} was reached`, true, s.words.hints[end] ?? "", s.message),
  };
}

/** Failed with the scheduler's reason; a plain exit of the command is said in the detail. */
export function failedByScheduler(
  obs: Observation,
  base: Base,
  s: SchedulerFacts,
  end: SchedulerEnd,
): Decision {
  const x = obs.exit;
  const detail =
    x !== null && x.signal === null && x.exit_code !== null
      ? `${s.message}; the command itself exited with code ${x.exit_code} after ${s.words.name}'s ${end} verdict on the job`
      : s.message;
  return {
    ...base,
    to: "failed",
    reason: end,
    error: err(
      "runtime_failed",
      end,
      end !== "out_of_memory",
      s.words.hints[end] ?? "read the status message and the stderr tail",
      detail,
    ),
  };
}

export function batchLaunchFailed(base: Base, s: SchedulerFacts): Decision {
  const detail = [s.message, s.batch_stderr?.trim().slice(-1000)].filter((t) => t).join("; batch stderr: ");
  const w = s.words.launch_failed;
  return {
    ...base,
    to: "failed",
    reason: "launch_failed",
    error: err("launch_failed", w.reason, false, w.suggestion, detail),
  };
}

/** The batch script failed with the scheduler's exit code (no exit record). */
export function batchFailed(base: Base, s: SchedulerFacts): Decision {
  const what = base.signal
    ? `killed by signal ${base.signal}`
    : `exited with code ${base.exit_code ?? "unknown"}`;
  return {
    ...base,
    to: "failed",
    reason: base.signal ? "signaled" : "nonzero_exit",
    error: err(
      "runtime_failed",
      `the job ${what}`,
      false,
      "read the digest and stderr tail; fix the command and run it again",
      s.message,
    ),
  };
}

/** Lost: neither the scheduler nor the wrapper's records say how it ended (after the accounting grace). */
export function lostByScheduler(
  job: Job,
  obs: Observation,
  s: SchedulerFacts,
  nowMs: number,
  reason: string,
  suggestion: string,
  detail: string = s.message,
): Decision {
  return lostDecision({
    reason,
    finished_at: new Date(nowMs).toISOString(),
    started_at: obs.started?.started_at ?? job.started_at,
    suggestion,
    detail: `${s.words.name} job ${s.job_id}: ${detail} (for longer than ${s.words.grace_setting})`,
  });
}

/** Lost: a submission whose reply was lost, and no job carries its tag. */
export function submissionNotFound(job: Job, s: SchedulerFacts, nowMs: number): Decision {
  const never = job.backend_id === null;
  const reason = never ? "launch_interrupted" : "submission_not_found";
  const w = s.words.not_found;
  return lostDecision({
    reason,
    finished_at: new Date(nowMs).toISOString(),
    started_at: null,
    suggestion: w.suggestion,
    detail: never ? w.never_launched : w.reply_lost,
  });
}
