// A reserved job's launch: the wrapper started and its start awaited; a failed launch undone (no space), retried
// (--retries) or ended launch_failed; a retry's next attempt launched; the ends of a job that never ran (its
// dependency failed, or cancelled before an attempt).
import { dirname } from "node:path";
import type { Backend, LaunchInput } from "../backend/backend.ts";
import { recordFinal } from "../dependencies/retried-parents.ts";
import { AwaitlessError } from "../model/errors.ts";
import type { JobState } from "../model/job.ts";
import type { SubmitResponse } from "../model/service-api.ts";
import { admissionFor } from "../queues/queue-service.ts";
import {
  type BuiltResult,
  cancelledBeforeLaunchResult,
  dependencyFailedResult,
  launchFailedResult,
} from "../results/result-builder.ts";
import { beginRetry } from "../retries/retry-attempt.ts";
import { arrayTaskEnv, retryDue } from "../retries/retry-policy.ts";
import { dependencyFailed } from "../rules/reconcile.ts";
import { nowIso, type StoredJob } from "../store/job-store.ts";
import { jobDirScope } from "../util/job-dir-guard.ts";
import { isNoSpace, noSpaceFromErrno } from "../util/no-space.ts";
import type { ValidatedLaunch } from "./launch-request.ts";
import { type LifecycleDeps, recorded } from "./lifecycle-context.ts";

export type Launched = Omit<SubmitResponse, "idempotent_replay">;

/** Ends a job whose command never ran: no exit, no output, `built` as its result. */
function endUnlaunched(
  life: Pick<LifecycleDeps, "store">,
  job: StoredJob,
  to: JobState,
  reason: string,
  built: BuiltResult,
): StoredJob {
  return life.store.transition(job.job_id, to, {
    historyReason: reason,
    terminal: {
      exit_code: null,
      signal: null,
      reason,
      finished_at: built.result.finished_at,
      stdout_bytes: 0,
      stderr_bytes: 0,
      result_json: built.json,
      result_sha256: built.sha256,
    },
  }).job;
}

async function launchedAs(life: LifecycleDeps, job: StoredJob): Promise<Launched> {
  return { job_id: job.job_id, state: job.state, backend: job.backend, job: await life.toStatus(job) };
}

/**
 * Starts the wrapper of a reserved job and waits briefly for it to start. A failed launch fails the job — except
 * when a resumed launch finds another launch of the same job got there first (SSH: its directory exists): then
 * nothing is decided here (null) and the reconciler follows that other launch.
 */
export async function launchReserved(
  life: LifecycleDeps,
  job: StoredJob,
  v: ValidatedLaunch,
  backend: Backend,
  holds: { admission: LaunchInput["admission"]; after: LaunchInput["after"] },
  resumed: boolean,
): Promise<Launched | null> {
  const s = life.settings;
  if (process.env.AWAITLESS_TEST_CRASH_AFTER_RESERVE === "1") process.exit(99);
  let launched = false;
  try {
    const backendId = await backend.launch({
      job,
      secretValues: v.secretValues,
      graceSeconds: s.graceSeconds,
      logCapBytes: s.logCapBytes,
      ...(holds.admission ? { admission: holds.admission } : {}),
      ...(holds.after ? { after: holds.after } : {}),
    });
    launched = true;
    if (process.env.AWAITLESS_TEST_CRASH_AFTER_LAUNCH === "1") process.exit(98);
    // The wrapper's `started` record names its pid too: on a full store the job is still found and reconciled.
    recorded(
      life,
      () => {
        life.store.setBackendId(job.job_id, backendId);
        return job;
      },
      () => job,
    );
  } catch (e) {
    if (resumed && e instanceof AwaitlessError && e.details.job_dir_exists === true) return null;
    if (!launched && isNoSpace(e)) {
      await undoLaunch(life, job);
      throw noSpaceFromErrno(e) ?? e;
    }
    if (await retryLaunchFailure(life, job, e)) return launchedAs(life, await life.refresh(job.job_id));
    finishWithError(life, job, e);
    await recordFinal(life.final, life.getJob(job.job_id));
    throw e;
  }
  return launchedAs(life, await waitForStart(life, job.job_id));
}

/** Launches a retried job's current attempt (RetryDeps.launch); a Slurm attempt's held children then follow it. */
export async function launchAttempt(
  life: LifecycleDeps,
  job: StoredJob,
  secretValues: Record<string, string>,
): Promise<void> {
  const spec = job.spec;
  const backend = life.backendFor(job);
  const taskEnv = arrayTaskEnv(backend.capabilities, life.store.attempts.list(job.job_id)[0]?.backend_id);
  await launchReserved(
    life,
    Object.keys(taskEnv).length === 0 ? job : { ...job, spec: { ...spec, env: { ...spec.env, ...taskEnv } } },
    { secretValues } as ValidatedLaunch,
    backend,
    { admission: admissionFor(life.store, spec, backend), after: undefined },
    false,
  ).catch(() => undefined);
  await life.dependencies.redependChildren(job);
}

/**
 * A launch that found no space before any wrapper started: its files and its row are removed, so nothing is left
 * half-made and its client_request_id stays free for the retry. When even that cannot be written, the row is
 * marked failed, or, on a store too full for either, left `starting`: reconcile makes it lost after the grace.
 */
async function undoLaunch(life: LifecycleDeps, job: StoredJob): Promise<void> {
  await life
    .backendFor(job)
    .remove(job, jobDirScope(job, dirname(life.store.path)))
    .catch(() => undefined);
  try {
    life.store.deleteUnlaunched(job.job_id);
  } catch {
    try {
      finishWithError(life, job, new Error("no space left to launch the job"));
    } catch {
      // the store is full: reconcile rule 6 ends the row
    }
  }
}

/** A failed launch of a job that retries infrastructure faults: that attempt is kept and the next one reserved. */
async function retryLaunchFailure(life: LifecycleDeps, job: StoredJob, e: unknown): Promise<boolean> {
  if (!job.spec.retry) return false;
  const message = e instanceof Error ? e.message : String(e);
  const built = launchFailedResult(
    job,
    message,
    e instanceof AwaitlessError ? e.hint : "check the message and retry",
  );
  const r = built.result;
  const d = {
    kind: "terminal" as const,
    to: "failed" as const,
    exit_code: null,
    signal: null,
    reason: "launch_failed",
    finished_at: r.finished_at,
    started_at: null,
    descendants_alive: false,
    error: r.error,
  };
  const current = life.store.get(job.job_id);
  if (!current || !retryDue(current, d)) return false;
  return (await beginRetry(life.retries, current, d, built)) === "reserved";
}

/** A launch that failed before the wrapper ran: the job is failed with stage launch_failed, never left dangling. */
export function finishWithError(life: Pick<LifecycleDeps, "store">, job: StoredJob, e: unknown): void {
  if (e === undefined || e === null) e = new Error("the backend gave no identity for the job");
  const message = e instanceof Error ? e.message : String(e);
  const built = launchFailedResult(
    job,
    message,
    e instanceof AwaitlessError ? e.hint : "check the message and retry",
  );
  endUnlaunched(life, job, "failed", "launch_failed", built);
}

/** A retried job cancelled before its next attempt was launched: it ends now, that attempt never runs. */
export async function endCancelledBeforeLaunch(life: LifecycleDeps, job: StoredJob): Promise<StoredJob> {
  const ended = endUnlaunched(life, job, "cancelled", "cancelled", cancelledBeforeLaunchResult(job));
  await recordFinal(life.final, ended);
  return ended;
}

/** A job whose dependency already failed: it ends dependency_failed and is never handed to its backend. */
export async function endDependencyFailed(
  life: LifecycleDeps,
  job: StoredJob,
  dependency: string,
): Promise<SubmitResponse> {
  const d = dependencyFailed(
    { exit_code: null, signal: null, finished_at: nowIso(), started_at: null, descendants_alive: false },
    dependency,
  );
  if (d.kind !== "terminal" || !d.error) throw new Error("dependencyFailed gives a terminal decision");
  endUnlaunched(life, job, "cancelled", "dependency_failed", dependencyFailedResult(job, d.error));
  const ended = life.getJob(job.job_id);
  return {
    job_id: job.job_id,
    state: ended.state,
    backend: ended.backend,
    idempotent_replay: false,
    job: await life.toStatus(ended),
  };
}

async function waitForStart(life: LifecycleDeps, jobId: string): Promise<StoredJob> {
  const deadline = Date.now() + life.settings.startWaitMs;
  let job = await life.refresh(jobId);
  while ((job.state === "starting" || (await admissionPending(life, job))) && Date.now() < deadline) {
    await life.backendFor(job).waitForChange(job, Math.min(50, deadline - Date.now()));
    job = await life.refresh(jobId);
  }
  return job;
}

/** A queued job whose wrapper has not yet taken its place in line, or was just admitted (about to start). */
async function admissionPending(life: LifecycleDeps, job: StoredJob): Promise<boolean> {
  if (job.state !== "queued" || (job.spec.queue === null && !job.spec.resources)) return false;
  const q = (await life.backendFor(job).observe(job, life.dependencies.lookOf(job))).queued;
  return q === undefined || q.admitted;
}
