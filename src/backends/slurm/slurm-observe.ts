// Owns one observation of a Slurm job: the shared poll's squeue/sacct lines, the wrapper's records in the job
// directory, scontrol for exact exit codes, find-by-tag for unconfirmed submissions; reported as facts (slurm-facts).
// "Settle" means one thing here and in slurm-facts/slurm-states: Slurm's view of a job reaching its final state.

import { type SlurmBackendId, slurmIdOf } from "../../core/model/backend-id.ts";
import type { Job } from "../../core/model/job.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { SchedulerFacts } from "../../core/model/scheduler-facts.ts";
import { attemptKey } from "../../core/retries/retry-policy.ts";
import { recordsOfThisRun } from "../../core/rules/reconcile.ts";
import { SBATCH_STDERR_FILE } from "./sbatch-script.ts";
import { findArrayTasks } from "./slurm-array.ts";
import { type Patience, slurmFacts, slurmTime, unconfirmedFacts } from "./slurm-facts.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { look, NONE, type WrapperView } from "./slurm-look.ts";
import { parseScontrolJob, scontrolShowJobArgs } from "./slurm-queries.ts";
import { observeSlurmJob, parseSlurmExitCode, type SlurmExit, type SlurmStatus } from "./slurm-states.ts";
import { findByTag } from "./slurm-submit.ts";

export { wrapperView } from "./slurm-look.ts";

/**
 * Per-process memory shared by observations. What a new process must not rebuild from scratch (an adopted ID, the
 * start of the accounting grace) is also persisted in the job's backend_id through `persist`.
 */
export interface ObserveDeps {
  /** Our job ID → Slurm job ID found by tag after an unconfirmed submission. */
  adopted: Map<string, string>;
  /** Slurm job ID → when it was first seen neither active nor final. */
  unsettledSince: Map<string, number>;
  /** Slurm job ID → when this process first read the wrapper's exit record. */
  exitSeen: Map<string, number>;
  /** Slurm job ID → exact exit from scontrol (asked once). */
  scontrol: Map<string, SlurmExit | null>;
  /** Our job ID → when find-by-tag last ran (at most once per poll interval). */
  lookups: Map<string, number>;
  /** Slurm job IDs this process has scancelled. */
  scancelled: Set<string>;
  /** Slurm job ID → how its last observation came (the login side's watch or a poll round), persisted at its end. */
  via: Map<string, "watch" | "poll">;
  /** Stores fields merged into the job's backend_id (JobStore.setBackendId); absent: memory only. */
  persist?: (job: Job, fields: PersistedFields) => void;
}

/** The backend_id fields observations persist, so a second process neither re-adopts nor restarts the grace. */
export interface PersistedFields {
  slurm_job_id?: string;
  adopted?: boolean;
  /** ISO time since when squeue/sacct gave no final answer for a job out of the queue; absent when settled. */
  unsettled_since?: string | undefined;
  /** How the end was observed: the exit record by the login side's watch (confirmed by sacct), or a poll round. */
  completion?: "watch" | "poll";
}

/** The fields of PersistedFields, each removed from the stored backend_id when it is set to undefined. */
export const PERSISTED = [
  "slurm_job_id",
  "adopted",
  "unsettled_since",
  "completion",
] as const satisfies readonly (keyof PersistedFields)[];

export interface ObserveContext {
  launchGraceMs: number;
  exitSettleMs: number;
  scancel: (slurmJobId: string) => Promise<void>;
  /** A parent with retries is active: a never-satisfied dependency may be moved to its next attempt (redepend). */
  parentMayRetry?: boolean;
  /** A held child (sbatch --hold) whose parent ended so that its condition cannot hold: ended as never satisfied. */
  heldFailed?: boolean;
}

function observation(
  w: WrapperView,
  extra: { unreachable?: string; scheduler?: SchedulerFacts },
): Observation {
  // wrapperAlive/bootIdNow: unknowable from the login node (the wrapper runs on a compute node); Slurm says instead
  return { ...w, wrapperAlive: null, bootIdNow: null, ...extra };
}

/** The observation of the job now; the reconcile rules judge it (core), and forgetEnded follows an end they find. */
export async function observeJob(
  h: SlurmHost,
  job: Job,
  deps: ObserveDeps,
  ctx: ObserveContext,
): Promise<Observation> {
  const bid: SlurmBackendId = slurmIdOf(job) ?? {};
  const dir = bid.remote_dir;
  const sinceMs = Date.parse(bid.submitted_at ?? job.created_at);
  const patience: Patience = {
    accountingGraceMs: h.settings.accountingGraceMs,
    exitSettleMs: ctx.exitSettleMs,
    launchGraceMs: ctx.launchGraceMs,
  };
  let id = bid.slurm_job_id ?? deps.adopted.get(attemptKey(job));
  if (id === undefined) {
    const found = await lookUp(h, job, deps, sinceMs, patience);
    if (typeof found === "object") return observation(NONE, found);
    id = found;
  }
  const looked = await look(h, id, sinceMs, dir);
  if ("error" in looked) {
    return observation(looked.wrapper, { unreachable: `Slurm on ${h.name} did not answer: ${looked.error}` });
  }
  const { entry, via } = looked;
  // after a requeue the earlier run's records stay until this run's wrapper clears them (reconcile rule 1d)
  const wrapper = recordsOfThisRun(looked.wrapper, slurmTime(entry.sacct?.start));
  const status = heldWords(
    bid.held === true,
    cancelledWhilePending(job, id, entry, wrapper.started !== null) ?? observeSlurmJob(entry),
  );
  // Slurm can never start it (a parent ended so that its --dependency cannot hold): end it and take it off the queue.
  if (
    entry.squeue?.slurmState === "PENDING" &&
    (entry.squeue.reason === "DependencyNeverSatisfied" || ctx.heldFailed === true) &&
    wrapper.started === null
  ) {
    const facts = slurmFacts({ job, slurmJobId: id, status, patience });
    const never = observation(wrapper, { scheduler: { ...facts, dependency_never_satisfied: true } });
    // Not final yet: kept in the queue (and polled) while the parent's next attempt may become the dependency.
    if (ctx.parentMayRetry) return never;
    if (!deps.scancelled.has(id)) await ctx.scancel(id).catch(() => undefined);
    h.poller.forget(id);
    // ended never run: no end of its own was seen, so none is recorded as watched or polled
    deps.via.delete(id);
    return never;
  }
  // a cancel recorded while the submission was unconfirmed reaches the job once it is found
  if (
    job.cancel_requested_at &&
    (status.kind === "active" || status.kind === "interrupted") &&
    !deps.scancelled.has(id)
  ) {
    await ctx.scancel(id).catch(() => undefined);
  }
  trackUnsettled(
    job,
    id,
    bid.unsettled_since,
    // a COMPLETED job, or a started one whose batch shell died by a signal, waits for its exit record as for
    // accounting (the record may show late)
    status.kind === "unsettled" ||
      status.kind === "missing" ||
      (status.kind === "terminal" &&
        wrapper.exit === null &&
        (status.end === "completed" ||
          (status.end === "failed" && wrapper.started !== null && !!status.exit?.signal))),
    deps,
  );
  if (wrapper.exit !== null && !deps.exitSeen.has(id)) deps.exitSeen.set(id, Date.now());
  const exitSeenSinceMs =
    wrapper.exit === null
      ? undefined
      : Math.min(deps.exitSeen.get(id) ?? Date.now(), Date.parse(wrapper.exit.finished_at) || Date.now());
  let scontrolExit: SlurmExit | undefined;
  if (status.kind === "terminal" && wrapper.exit === null && status.exit?.exact === false) {
    scontrolExit = (await exactExit(h, id, deps)) ?? undefined;
  }
  const batchStderr =
    status.kind === "terminal" && wrapper.started === null && dir
      ? ((await h.runner.readFile(`${dir}/${SBATCH_STDERR_FILE}`, 4096).catch(() => null)) ?? undefined)
      : undefined;
  const unsettledSinceMs = deps.unsettledSince.get(id);
  const scheduler = slurmFacts({
    job,
    slurmJobId: id,
    status,
    ...(entry.sacct ? { sacct: entry.sacct } : {}),
    ...(scontrolExit ? { scontrolExit } : {}),
    ...(unsettledSinceMs !== undefined ? { unsettledSinceMs } : {}),
    ...(exitSeenSinceMs !== undefined ? { exitSeenSinceMs } : {}),
    ...(batchStderr !== undefined ? { batchStderr } : {}),
    patience,
  });
  deps.via.set(id, via);
  return observation(wrapper, { scheduler });
}

/**
 * The reconcile rules ended the job with an observation of Slurm job `id`: this process stops following it (its
 * watch, its place in the poll rounds, its graces) and records how its end was seen.
 */
export function forgetEnded(h: SlurmHost, job: Job, id: string, deps: ObserveDeps): void {
  const via = deps.via.get(id);
  h.events.forget(id);
  if (via !== undefined) deps.persist?.(job, { completion: via });
  h.poller.forget(id);
  deps.exitSeen.delete(id);
  deps.unsettledSince.delete(id);
  deps.via.delete(id);
}

/**
 * Slurm keeps no line of its own for an array task cancelled while pending: squeue drops it and sacct has at most its
 * array's collapsed line (`123_[4-9]`, still PENDING when the task alone was cancelled). A task we scancelled that never
 * started and that squeue no longer lists was cancelled by Slurm: that is the fact reported.
 */
function cancelledWhilePending(
  job: Job,
  id: string,
  entry: { squeue?: unknown; sacct?: { collapsed?: true } },
  started: boolean,
): ReturnType<typeof observeSlurmJob> | undefined {
  if (!/^\d+_\d+$/.test(id) || !job.cancel_requested_at || started || entry.squeue !== undefined)
    return undefined;
  if (entry.sacct !== undefined && entry.sacct.collapsed !== true) return undefined;
  return {
    kind: "terminal",
    end: "cancelled",
    statusMessage: `Slurm array task ${id} was cancelled while pending (Slurm keeps no accounting line for it)`,
  };
}

/** The Slurm ID of a job whose submission is unconfirmed, found by tag; or what to report while it is not found. */
async function lookUp(
  h: SlurmHost,
  job: Job,
  deps: ObserveDeps,
  sinceMs: number,
  patience: Patience,
): Promise<string | { unreachable?: string; scheduler?: SchedulerFacts }> {
  const last = deps.lookups.get(attemptKey(job)) ?? 0;
  const looking = `submission to Slurm on ${h.name} not confirmed yet; looking for the job tagged awaitless:${attemptKey(job)}`;
  const facts = (notFound: boolean) => ({
    scheduler: unconfirmedFacts(job, looking, notFound, sinceMs, patience),
  });
  if (Date.now() - last < h.poller.currentIntervalMs) return facts(false);
  deps.lookups.set(attemptKey(job), Date.now());
  const arr = slurmIdOf(job);
  let ids: string[];
  try {
    ids =
      arr?.array_tag !== undefined
        ? // an array task: its chunk's tag, and of the tasks found the one with its task ID
          (await findArrayTasks(h, arr.array_tag, job.name ?? undefined, new Date(sinceMs))).filter((x) =>
            x.endsWith(`_${arr.array_task}`),
          )
        : await findByTag(
            h.runner,
            { jobId: attemptKey(job), ...(job.name ? { jobName: job.name } : {}) },
            new Date(sinceMs),
            h.settings.callTimeoutMs,
          );
  } catch (e) {
    return { unreachable: `Slurm on ${h.name} did not answer: ${(e as Error).message}` };
  }
  if (ids[0] !== undefined) {
    deps.adopted.set(attemptKey(job), ids[0]);
    // a new process reads the ID from the store instead of looking for the tag again
    deps.persist?.(job, { slurm_job_id: ids[0], adopted: true });
    return ids[0];
  }
  // sbatch may still be on its way (or accounting lagging): the rules give it the launch and accounting graces
  return facts(true);
}

/**
 * The start of the accounting grace: the earliest of this process's first sighting and the one persisted by any
 * process before; persisted when it starts, cleared when Slurm answers again (a requeued job).
 */
function trackUnsettled(
  job: Job,
  id: string,
  persisted: string | undefined,
  unsettled: boolean,
  deps: ObserveDeps,
): void {
  const persistedMs = persisted === undefined ? Number.NaN : Date.parse(persisted);
  if (!unsettled) {
    deps.unsettledSince.delete(id);
    if (persisted !== undefined) deps.persist?.(job, { unsettled_since: undefined });
    return;
  }
  const mine = deps.unsettledSince.get(id);
  const since = Math.min(
    mine ?? Date.now(),
    Number.isNaN(persistedMs) ? Number.POSITIVE_INFINITY : persistedMs,
  );
  deps.unsettledSince.set(id, since);
  if (persisted === undefined) deps.persist?.(job, { unsettled_since: new Date(since).toISOString() });
}

async function exactExit(h: SlurmHost, id: string, deps: ObserveDeps): Promise<SlurmExit | null> {
  if (deps.scontrol.has(id)) return deps.scontrol.get(id) ?? null;
  let exit: SlurmExit | null = null;
  try {
    const r = await h.runner.exec(scontrolShowJobArgs(id), { timeoutMs: h.settings.callTimeoutMs });
    const job = r.code === 0 ? parseScontrolJob(r.stdout) : undefined;
    exit = parseSlurmExitCode(job?.exitCode, "scontrol") ?? null;
  } catch {
    // the controller forgot the job or is away: sacct's code stands
  }
  deps.scontrol.set(id, exit);
  return exit;
}

/** A child we submitted held (a :failed/:any parent with retries): says what releases it, not Slurm's words. */
function heldWords(held: boolean, status: SlurmStatus): SlurmStatus {
  if (!held || status.kind !== "active" || !status.statusMessage.includes("(JobHeldUser)")) return status;
  return {
    ...status,
    statusMessage: status.statusMessage.replace(
      /held by its owner \(release with scontrol release\)/,
      "held for a parent with retries until its last attempt ends (a client looking at this job then releases it)",
    ),
  };
}
