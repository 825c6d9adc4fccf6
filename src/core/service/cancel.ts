// Cancelling: one job (intent first, a retry's unlaunched attempt ended, a lost job's leftover group stopped) and many
// jobs of one target in one backend call.

import { watched08Of } from "../model/backend-id.ts";
import { invalid } from "../model/errors.ts";
import { isTerminal } from "../model/job.ts";
import type { CancelResponse } from "../model/service-api.ts";
import { isLeftoverStop } from "../model/service-api.ts";
import { awaitingAttempt } from "../retries/retry-attempt.ts";
import { nowIso, type StoredJob } from "../store/job-store.ts";
import { endCancelledBeforeLaunch } from "./launch.ts";
import type { LifecycleDeps } from "./lifecycle-context.ts";
import { waitFor } from "./wait.ts";

/** Cancels one job: its intent persisted first, then the backend's cancel and a wait for its end (grace + 5 s). */
export async function cancelJob(
  life: LifecycleDeps,
  jobId: string,
  gracePeriodSeconds?: number,
): Promise<CancelResponse> {
  const grace = gracePeriodSeconds ?? life.settings.graceSeconds;
  if (!Number.isFinite(grace) || grace < 0)
    throw invalid(`bad grace period ${grace}`, "give a duration ≥ 0, e.g. 10s");
  let job = await life.refresh(jobId);
  if (!isTerminal(job.state) && watched08Of(job)) {
    throw invalid(
      `${jobId} is run by Awaitless 0.8, which owns it; it was not cancelled`,
      "cancel it with Awaitless 0.8; this store follows it until 0.8 records its end",
    );
  }
  if (isTerminal(job.state)) {
    // Lost with its wrapper killed, the command's group may still run: stop it (certainly this job's, or refused).
    // Ended keeping processes running (--keep-leftovers): stop those.
    const backend = life.backendFor(job);
    const lostRunning = job.state === "lost" && job.reason === "wrapper_killed";
    const leftover =
      (lostRunning || keptLeftovers(life, job)) && backend.stopLeftover
        ? await backend.stopLeftover(job, grace)
        : undefined;
    return alreadyEnded(life, job, leftover);
  }
  // Intent first: once persisted, any reader that sees the command die records `cancelled`.
  if (!life.store.requestCancel(jobId, nowIso())) {
    return alreadyEnded(life, life.getJob(jobId));
  }
  job = life.getJob(jobId);
  if (awaitingAttempt(job) && !job.launcher) {
    job = await endCancelledBeforeLaunch(life, job);
    return {
      job_id: jobId,
      job_state: job.state,
      cancel_requested: true,
      already_terminal: false,
      ...(job.result_json ? { result: life.resultOf(job)! } : {}),
    };
  }
  const said = await life.backendFor(job).cancel(job, grace);
  await waitFor(life, jobId, { timeoutMs: (grace + 5) * 1000, untracked: true });
  job = life.getJob(jobId);
  const result = life.resultOf(job);
  // The wrapper died meanwhile: what the backend did about the command's group is worth saying, as for a lost job.
  const leftover = job.state === "lost" && isLeftoverStop(said) ? said : undefined;
  return {
    job_id: jobId,
    job_state: job.state,
    cancel_requested: true,
    already_terminal: false,
    ...(result ? { result } : {}),
    ...(leftover ? { leftover } : {}),
  };
}

/** The job ended keeping processes running (its result says leftovers.action kept). */
function keptLeftovers(life: LifecycleDeps, job: StoredJob): boolean {
  return life.resultOf(job)?.leftovers?.action === "kept";
}

/** The answer for a job that had ended before this cancel asked anything of it. */
function alreadyEnded(
  life: LifecycleDeps,
  job: StoredJob,
  leftover?: CancelResponse["leftover"],
): CancelResponse {
  return {
    job_id: job.job_id,
    job_state: job.state,
    cancel_requested: false,
    already_terminal: true,
    result: life.resultOf(job)!,
    ...(leftover ? { leftover } : {}),
  };
}

/**
 * Cancels many jobs of one target at once: each one's intent persisted first, then one backend call for all
 * (Backend.cancelMany), then a wait for each to end. Answers how many were asked to cancel.
 */
export async function cancelJobs(
  life: LifecycleDeps,
  jobIds: string[],
  gracePeriodSeconds?: number,
): Promise<number> {
  const grace = gracePeriodSeconds ?? life.settings.graceSeconds;
  const asked: StoredJob[] = [];
  for (const id of jobIds) {
    const job = await life.refresh(id);
    if (isTerminal(job.state) || !life.store.requestCancel(id, nowIso())) continue;
    asked.push(life.getJob(id));
  }
  const first = asked[0];
  if (!first) return 0;
  const backend = life.backendFor(first);
  if (backend.cancelMany) await backend.cancelMany(asked, grace);
  else for (const j of asked) await backend.cancel(j, grace);
  const deadline = Date.now() + (grace + 5) * 1000;
  for (const j of asked)
    await waitFor(life, j.job_id, { timeoutMs: Math.max(0, deadline - Date.now()), untracked: true });
  return asked.length;
}
