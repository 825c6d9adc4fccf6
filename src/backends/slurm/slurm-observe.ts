// Owns one observation of a Slurm job: the shared poll's squeue/sacct lines, the wrapper's records in the job
// directory, scontrol for exact exit codes, find-by-tag for unconfirmed submissions; the verdict comes from slurm-verdict.

import type { ExitInfo, HeartbeatInfo, Observation, StartedInfo } from "../../core/backend.ts";
import type { Job } from "../../core/job.ts";
import type { Decision } from "../../core/reconcile.ts";
import { FILES, parseExitRecord, parseHeartbeat, parseStarted } from "../../wrapper/protocol.ts";
import { observationFromRecords } from "../observation.ts";
import { SBATCH_STDERR_FILE } from "./sbatch-script.ts";
import { neverSatisfied } from "./slurm-dependency.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { parseScontrolJob, scontrolShowJobArgs } from "./slurm-queries.ts";
import { observeSlurmJob, parseSlurmExitCode, type SlurmExit } from "./slurm-states.ts";
import { findByTag } from "./slurm-submit.ts";
import { slurmVerdict } from "./slurm-verdict.ts";

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
  /** Stores fields merged into the job's backend_id (JobStore.setBackendId); absent: memory only. */
  persist?: (job: Job, fields: PersistedFields) => void;
}

/** The backend_id fields observations persist, so a second process neither re-adopts nor restarts the grace. */
export interface PersistedFields {
  slurm_job_id?: string;
  adopted?: boolean;
  /** ISO time since when squeue/sacct gave no final answer for a job out of the queue; absent when settled. */
  unsettled_since?: string | undefined;
}

export interface ObserveContext {
  launchGraceMs: number;
  exitSettleMs: number;
  scancel: (slurmJobId: string) => Promise<void>;
}

interface WrapperView {
  started: StartedInfo | null;
  exit: ExitInfo | null;
  heartbeat: HeartbeatInfo | null;
}

/**
 * The wrapper's record texts (null: no such file) through the mapping local and SSH jobs use: an exit record written
 * before the command started (cancelled during the batch script's start-up) has exit_code null, never 0.
 */
export function wrapperView(texts: {
  started: string | null;
  exit: string | null;
  heartbeat: string | null;
}): WrapperView {
  const o = observationFromRecords(
    {
      started: texts.started === null ? null : parseStarted(texts.started),
      exit: texts.exit === null ? null : parseExitRecord(texts.exit),
      heartbeat: texts.heartbeat === null ? null : parseHeartbeat(texts.heartbeat),
      queued: null,
    },
    { wrapperAlive: null, bootIdNow: null },
  );
  return { started: o.started, exit: o.exit, heartbeat: o.heartbeat };
}

async function readWrapper(h: SlurmHost, dir: string): Promise<WrapperView> {
  const read = (name: string) => h.runner.readFile(`${dir}/${name}`, 4096);
  const [started, exit, heartbeat] = await Promise.all([
    read(FILES.started),
    read(FILES.exit),
    read(FILES.heartbeat),
  ]);
  return wrapperView({ started, exit, heartbeat });
}

function observation(w: WrapperView, extra: { unreachable?: string; scheduler?: Decision }): Observation {
  // wrapperAlive/bootIdNow: unknowable from the login node (the wrapper runs on a compute node); Slurm says instead
  return { ...w, wrapperAlive: null, bootIdNow: null, ...extra };
}

const NONE: WrapperView = { started: null, exit: null, heartbeat: null };

export async function observeJob(
  h: SlurmHost,
  job: Job,
  deps: ObserveDeps,
  ctx: ObserveContext,
): Promise<Observation> {
  const bid = (job.backend_id ?? {}) as {
    slurm_job_id?: string;
    remote_dir?: string;
    submitted_at?: string;
    unsettled_since?: string;
  };
  const dir = bid.remote_dir;
  const sinceMs = Date.parse(bid.submitted_at ?? job.created_at);
  let id = bid.slurm_job_id ?? deps.adopted.get(job.job_id);
  if (id === undefined) {
    const found = await lookUp(h, job, deps, sinceMs, ctx.launchGraceMs);
    if (typeof found === "object") return observation(NONE, found);
    id = found;
  }
  const snap = await h.poller.view(id, sinceMs);
  const wrapper = dir ? await readWrapper(h, dir).catch(() => NONE) : NONE;
  if (snap.error !== undefined) {
    return observation(wrapper, { unreachable: `Slurm on ${h.name} did not answer: ${snap.error}` });
  }
  const entry = snap.rows.get(id) ?? {};
  const status = observeSlurmJob(entry);
  // Slurm can never start it (a parent ended so that its --dependency cannot hold): end it and take it off the queue.
  if (
    entry.squeue?.slurmState === "PENDING" &&
    entry.squeue.reason === "DependencyNeverSatisfied" &&
    wrapper.started === null
  ) {
    if (!deps.scancelled.has(id)) await ctx.scancel(id).catch(() => undefined);
    h.poller.forget(id);
    return observation(wrapper, { scheduler: neverSatisfied(job, Date.now()) });
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
    status.kind === "unsettled" || status.kind === "missing",
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
  const scheduler = slurmVerdict({
    job,
    nowMs: Date.now(),
    slurmJobId: id,
    status,
    ...(entry.sacct ? { sacct: entry.sacct } : {}),
    started: wrapper.started,
    exit: wrapper.exit,
    ...(scontrolExit ? { scontrolExit } : {}),
    ...(unsettledSinceMs !== undefined ? { unsettledSinceMs } : {}),
    accountingGraceMs: h.settings.accountingGraceMs,
    ...(exitSeenSinceMs !== undefined ? { exitSeenSinceMs } : {}),
    exitSettleMs: ctx.exitSettleMs,
    ...(batchStderr !== undefined ? { batchStderr } : {}),
  });
  if (scheduler?.kind === "terminal" || (scheduler === undefined && wrapper.exit !== null)) {
    h.poller.forget(id);
    deps.exitSeen.delete(id);
    deps.unsettledSince.delete(id);
  }
  return observation(wrapper, scheduler ? { scheduler } : {});
}

/** The Slurm ID of a job whose submission is unconfirmed, found by tag; or what to report while it is not found. */
async function lookUp(
  h: SlurmHost,
  job: Job,
  deps: ObserveDeps,
  sinceMs: number,
  launchGraceMs: number,
): Promise<string | { unreachable?: string; scheduler?: Decision }> {
  const last = deps.lookups.get(job.job_id) ?? 0;
  const ageMs = Date.now() - sinceMs;
  const waiting = {
    scheduler: {
      kind: "active" as const,
      to: job.state,
      status_message: `submission to Slurm on ${h.name} not confirmed yet; looking for the job tagged awaitless:${job.job_id}`,
    },
  };
  if (Date.now() - last < h.poller.currentIntervalMs) return waiting;
  deps.lookups.set(job.job_id, Date.now());
  let ids: string[];
  try {
    ids = await findByTag(
      h.runner,
      { jobId: job.job_id, ...(job.name ? { jobName: job.name } : {}) },
      new Date(sinceMs),
      h.settings.callTimeoutMs,
    );
  } catch (e) {
    return { unreachable: `Slurm on ${h.name} did not answer: ${(e as Error).message}` };
  }
  if (ids[0] !== undefined) {
    deps.adopted.set(job.job_id, ids[0]);
    // a new process reads the ID from the store instead of looking for the tag again
    deps.persist?.(job, { slurm_job_id: ids[0], adopted: true });
    return ids[0];
  }
  // sbatch may still be on its way (or accounting lagging): give it the launch grace plus the accounting grace
  if (ageMs < launchGraceMs + h.settings.accountingGraceMs) return waiting;
  const never = job.backend_id === null;
  const reason = never ? "launch_interrupted" : "submission_not_found";
  return {
    scheduler: {
      kind: "terminal",
      to: "lost",
      exit_code: null,
      signal: null,
      reason,
      finished_at: new Date().toISOString(),
      started_at: null,
      descendants_alive: false,
      error: {
        stage: "lost",
        reason,
        retryable: true,
        suggestion: "submit the command again (a new client_request_id): Slurm has no job with its tag",
        detail: never
          ? "the client that created the job died before sbatch answered, and no Slurm job carries its tag"
          : `sbatch's reply was lost (${String((job.backend_id as { submit_unconfirmed?: string }).submit_unconfirmed ?? "")}) and no Slurm job carries the tag`,
      },
    },
  };
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
