// Owns one observation of a Slurm job: the shared poll's squeue/sacct lines, the wrapper's records in the job
// directory, scontrol for exact exit codes, find-by-tag for unconfirmed submissions; the verdict comes from slurm-verdict.
import type { ExitInfo, HeartbeatInfo, Observation, StartedInfo } from "../../core/backend.ts";
import type { Job } from "../../core/job.ts";
import type { Decision } from "../../core/reconcile.ts";
import { FILES, parseExitRecord, parseHeartbeat, parseStarted } from "../../wrapper/protocol.ts";
import { SBATCH_STDERR_FILE } from "./sbatch-script.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { parseScontrolJob, scontrolShowJobArgs } from "./slurm-queries.ts";
import { observeSlurmJob, parseSlurmExitCode, type SlurmExit } from "./slurm-states.ts";
import { findByTag } from "./slurm-submit.ts";
import { slurmVerdict } from "./slurm-verdict.ts";

/** Per-process memory shared by observations (never persisted: a new process rebuilds it). */
export interface ObserveDeps {
  /** Our job ID → Slurm job ID found by tag after an unconfirmed submission. */
  adopted: Map<string, string>;
  /** Slurm job ID → when it was first seen neither active nor final. */
  unsettledSince: Map<string, number>;
  /** Slurm job ID → exact exit from scontrol (asked once). */
  scontrol: Map<string, SlurmExit | null>;
  /** Our job ID → when find-by-tag last ran (at most once per poll interval). */
  lookups: Map<string, number>;
  /** Slurm job IDs this process has scancelled. */
  scancelled: Set<string>;
}

interface WrapperView {
  started: StartedInfo | null;
  exit: ExitInfo | null;
  heartbeat: HeartbeatInfo | null;
}

const iso = (s: number) => new Date(s * 1000).toISOString();

async function readWrapper(h: SlurmHost, dir: string): Promise<WrapperView> {
  const read = (name: string) => h.runner.readFile(`${dir}/${name}`, 4096);
  const [s, x, b] = await Promise.all([read(FILES.started), read(FILES.exit), read(FILES.heartbeat)]);
  const started = s === null ? null : parseStarted(s);
  const exit = x === null ? null : parseExitRecord(x);
  const hb = b === null ? null : parseHeartbeat(b);
  return {
    started: started && {
      wrapper_pid: started.wrapperPid,
      pid: started.pid,
      pgid: started.pgid ?? started.pid,
      boot_id: started.bootId ?? null,
      started_at: iso(started.startedAtEpochSeconds),
    },
    exit: exit && {
      exit_code: exit.exitCode ?? 0,
      signal: exit.signal ?? null,
      reason: exit.reason,
      finished_at: iso(exit.finishedAtEpochSeconds),
      descendants_alive: exit.descendantsAlive,
    },
    heartbeat: hb && {
      at: iso(hb.nowEpochSeconds),
      last_change_at: iso(hb.lastChangeEpochSeconds),
      stdout_bytes: hb.stdoutBytes,
      stderr_bytes: hb.stderrBytes,
    },
  };
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
  ctx: { launchGraceMs: number; scancel: (slurmJobId: string) => Promise<void> },
): Promise<Observation> {
  const bid = (job.backend_id ?? {}) as { slurm_job_id?: string; remote_dir?: string; submitted_at?: string };
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
  // a cancel recorded while the submission was unconfirmed reaches the job once it is found
  if (
    job.cancel_requested_at &&
    (status.kind === "active" || status.kind === "interrupted") &&
    !deps.scancelled.has(id)
  ) {
    await ctx.scancel(id).catch(() => undefined);
  }
  if (status.kind === "unsettled" || status.kind === "missing") {
    if (!deps.unsettledSince.has(id)) deps.unsettledSince.set(id, Date.now());
  } else deps.unsettledSince.delete(id);
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
    ...(batchStderr !== undefined ? { batchStderr } : {}),
  });
  if (scheduler?.kind === "terminal" || (scheduler === undefined && wrapper.exit !== null))
    h.poller.forget(id);
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
