// A job's refresh (one look): its held parents looked at, a retry's next attempt ended or launched, its wrapper
// observed once and the reconcile rules applied; the decision stored (a full disk: reported, stored later), a retry
// begun at its end. The look keeps its observation, so what is said of the job next (status, progress) reads it.

import { heldChildNow, parentsToLookAt, recordFinal } from "../dependencies/retried-parents.ts";
import { isTerminal } from "../model/job.ts";
import type { Observation } from "../model/observation.ts";
import { buildResult } from "../results/result-builder.ts";
import { awaitingAttempt, beginRetry, launchDueAttempt } from "../retries/retry-attempt.ts";
import { retryDue } from "../retries/retry-policy.ts";
import { decide } from "../rules/reconcile.ts";
import type { StoredJob } from "../store/job-store.ts";
import { type LifecycleDeps, recorded } from "./lifecycle-context.ts";
import type { Look } from "./service-context.ts";
import { observedActive, observedTerminal } from "./unsealed.ts";

/** Observes the job's wrapper and applies the reconcile rules; returns the job as stored afterwards. */
export async function refreshJob(life: LifecycleDeps, jobId: string): Promise<StoredJob> {
  return (await lookAt(life, jobId)).job;
}

/** One look at the job: refreshJob's job, with the observation it made (null when it made none). */
export async function lookAt(life: LifecycleDeps, jobId: string): Promise<Look> {
  const seen: Seen = { observation: null };
  const job = await refreshSeeing(life, jobId, seen);
  return { job, observation: seen.observation };
}

/** The observation of the job's current attempt this look made, if any. */
interface Seen {
  observation: Observation | null;
}

async function refreshSeeing(life: LifecycleDeps, jobId: string, seen: Seen): Promise<StoredJob> {
  const job = life.getJob(jobId);
  if (isTerminal(job.state)) {
    life.unreachable.delete(jobId);
    return job;
  }
  // A child held on its target for a parent with retries: that parent's next attempt, or its end, needs a reader.
  for (const parent of parentsToLookAt(job, (id) => life.store.get(id) ?? undefined)) {
    const now = isTerminal(parent.state) ? parent : await refreshJob(life, parent.job_id);
    await recordFinal(life.final, now);
  }
  const held = heldChildNow(job, (id) => life.store.get(id) ?? undefined, life.settings.capabilitiesOf);
  if (held === "release") await life.dependencies.releaseHeld(job);
  const parentMayRetry = life.dependencies.lookOf(job).parentMayRetry === true;
  if (awaitingAttempt(job)) {
    // A retry's next attempt: ended if cancelled first, launched once its backoff passed, else nothing to observe.
    if (job.cancel_requested_at !== null && !job.launcher)
      return await (await import("./launch.ts")).endCancelledBeforeLaunch(life, job);
    if (await launchDueAttempt(life.retries, job)) return life.getJob(jobId);
    if (!job.launcher) return job;
  }
  const backend = life.backendFor(job);
  const obs = await backend.observe(job, {
    ...(parentMayRetry ? { parentMayRetry } : {}),
    ...(held === "failed" ? { heldFailed: true } : {}),
  });
  seen.observation = obs;
  if (obs.unreachable) life.unreachable.set(jobId, obs.unreachable);
  else life.unreachable.delete(jobId);
  // Slurm found the child's dependency never satisfied by a parent's earlier attempt: point it at the current one
  // (repairs a retry launch whose client died before moving it).
  if (parentMayRetry && obs.scheduler?.dependency_never_satisfied) await life.dependencies.redepend(job);
  const d = decide(job, obs, {
    nowMs: Date.now(),
    launchGraceSeconds: life.settings.launchGraceSeconds,
    parentMayRetry,
  });
  // a backend that follows jobs between looks (Slurm) stops following this one: told by the one decision, no other
  if (d.kind === "terminal") await backend.ended?.(job, obs);
  if (d.kind === "none") return job;
  if (d.kind === "unreachable") {
    if (job.status_message === d.message) return job;
    return storeStatusMessage(life, job, d.message);
  }
  if (d.kind === "active") {
    if (d.to === job.state) {
      if (d.status_message === job.status_message) return job;
      return storeStatusMessage(life, job, d.status_message);
    }
    const patch = d.started_at ? { started_at: d.started_at } : {};
    return recorded(
      life,
      () =>
        life.store.transition(jobId, d.to, {
          ...patch,
          status_message: d.status_message,
          historyReason:
            d.to === "stalled"
              ? "no output"
              : d.to === "running"
                ? job.state === "stalled"
                  ? "output resumed"
                  : "started"
                : null,
        }).job,
      () => observedActive(job, d.to, d.status_message, d.started_at),
    );
  }
  const built = await buildResult(backend, job, d, life.settings.maxReturnBytes, life.settings.logTailLines);
  if (retryDue(job, d)) {
    const begun = await beginRetry(life.retries, job, d, built);
    if (begun !== "refused") {
      // the ended attempt's observation says nothing of the next one
      seen.observation = null;
      return refreshSeeing(life, jobId, seen);
    }
  }
  // The exit record stays on disk: when the store is full the result is reported now and sealed by a later reader.
  const ended = recorded(
    life,
    () =>
      life.store.transition(jobId, d.to, {
        ...(d.started_at ? { started_at: d.started_at } : {}),
        historyReason: d.reason ?? d.to,
        terminal: {
          exit_code: d.exit_code,
          signal: d.signal,
          reason: d.reason,
          finished_at: d.finished_at,
          stdout_bytes: built.stdoutBytes,
          stderr_bytes: built.stderrBytes,
          result_json: built.json,
          result_sha256: built.sha256,
        },
      }).job,
    () => observedTerminal(job, d, built),
  );
  // Only an end the store holds is told to the dependents (a full store's observed end is not yet the job's).
  const stored = life.store.get(jobId);
  if (stored && isTerminal(stored.state)) await recordFinal(life.final, stored);
  return ended;
}

/** The job's new status message, in its state; a full store reports it now and stores it later. */
function storeStatusMessage(life: LifecycleDeps, job: StoredJob, message: string | null): StoredJob {
  return recorded(
    life,
    () => {
      life.store.setStatusMessage(job.job_id, message);
      return life.store.get(job.job_id)!;
    },
    () => observedActive(job, job.state, message),
  );
}
