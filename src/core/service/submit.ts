// Submitting: a validated launch reserved exactly once (replays, conflicts, duplicates, a dead creator's launch
// finished) and launched; an array's tasks reserved one by one and handed to the backend in one submission.
import { dirname, join } from "node:path";
import { AwaitlessError, hint, invalid } from "../model/errors.ts";
import { newJobId } from "../model/ids.ts";
import { isTerminal, type Job, type JobSpec } from "../model/job.ts";
import { arrayOfQueue } from "../model/queue-names.ts";
import type { LaunchRequest, SubmitResponse } from "../model/service-api.ts";
import { admissionFor } from "../queues/queue-service.ts";
import { canonicalJson, sha256Hex } from "../results/canonical-json.ts";
import { launchAbandoned } from "../rules/launch-owner.ts";
import { nowIso, type StoredJob } from "../store/job-store.ts";
import { endDependencyFailed, finishWithError, launchReserved } from "./launch.ts";
import type { ValidatedLaunch } from "./launch-request.ts";
import type { LifecycleDeps } from "./lifecycle-context.ts";

/** A host this version cannot honour for a launch (ServiceSettings.refuseHost) is refused before any reserve. */
export function refuseHost(life: Pick<LifecycleDeps, "settings">, v: ValidatedLaunch): void {
  const refusal = v.spec.host === null ? undefined : life.settings.refuseHost?.(v.spec.host, v.spec.backend);
  if (refusal) throw refusal;
}

/** The row a launch reserves: a new job ID, its spec and keys, its job directory, this process as its launcher. */
function rowOf(life: LifecycleDeps, v: ValidatedLaunch, state: "queued" | "starting") {
  const s = life.settings;
  const jobId = newJobId();
  return {
    job_id: jobId,
    state,
    spec: v.spec,
    fingerprint: v.fingerprint,
    client_request_id: v.clientRequestId,
    active_key: v.activeKey,
    created_at: nowIso(),
    job_dir: v.spec.log_dir ? join(v.spec.log_dir, jobId) : jobDirFor(life, jobId),
    ...(s.launchOwners ? { launcher: s.launchOwners.self() } : {}),
  };
}

function reusedRequestId(v: ValidatedLaunch, job: StoredJob): AwaitlessError {
  return new AwaitlessError(
    "idempotency_conflict",
    `client_request_id ${v.clientRequestId} was already used for job ${job.job_id} with different arguments`,
    hint("new_client_request_id", { job_id: job.job_id }),
    { job_id: job.job_id },
  );
}

/** Reserves the job once (a replay answers that job, finishing a launch its dead creator left) and launches it. */
export async function submitValidated(
  life: LifecycleDeps,
  v: ValidatedLaunch,
  req: LaunchRequest,
): Promise<SubmitResponse> {
  const s = life.settings;
  const backend = life.backendFor(v.spec);
  // A queued job waits on its target for a slot: it is `queued` until its command starts.
  const admission = admissionFor(life.store, v.spec, backend);
  const after = await life.dependencies.plan(v);
  const res = life.store.reserve(
    // a Slurm job waits on the scheduler first (queued), then its allocation starts the wrapper (starting)
    rowOf(
      life,
      v,
      backend.capabilities.schedulesItself || admission || after?.waits.length ? "queued" : "starting",
    ),
    req.allow_duplicate ?? false,
  );
  if (res.kind === "conflict") {
    throw reusedRequestId(v, res.job);
  }
  if (res.kind === "duplicate") {
    throw new AwaitlessError(
      "duplicate_active_job",
      `the same command is already running in the same directory as job ${res.job.job_id} (${res.job.state})`,
      hint("wait_for_duplicate", { job_id: res.job.job_id }),
      { job_id: res.job.job_id },
    );
  }
  if (res.kind === "replay") {
    const job = await life.refresh(res.job.job_id);
    // The creating client died before launching (its process gone, no trace of a wrapper): finish that launch
    // here, exactly once among concurrent retries (the claim is one transaction). Anything less certain: replay.
    const owners = s.launchOwners;
    if (
      owners &&
      job.launcher &&
      (await launchAbandoned(job, backend, owners)) &&
      life.store.claimLaunch(job.job_id, job.launcher, owners.self())
    ) {
      const launched = await launchReserved(
        life,
        life.store.get(job.job_id)!,
        v,
        backend,
        { admission, after },
        true,
      );
      if (launched) return { ...launched, idempotent_replay: true, launch_resumed: true };
      return replayOf(life, job.job_id);
    }
    return {
      job_id: job.job_id,
      state: job.state,
      backend: job.backend,
      idempotent_replay: true,
      job: await life.toStatus(job),
    };
  }
  // Slurm is never asked to start a job whose dependency already failed (its afterok on an ended parent fails).
  if (after?.failed && backend.capabilities.nativeDependencies)
    return endDependencyFailed(life, res.job, after.failed);
  const launched = await launchReserved(life, res.job, v, backend, { admission, after }, false);
  return { ...launched!, idempotent_replay: false };
}

/**
 * The tasks of an array in one backend submission (Backend.launchArray): every task reserved as a job first (a
 * replayed key is that task again), then the new ones and those an earlier, dead submit left unlaunched are handed
 * to the backend together. Answers each task's job ID, in order.
 */
export async function launchArrayTasks(
  life: LifecycleDeps,
  tasks: { v: ValidatedLaunch; index: number }[],
  array: { arrayId: string; indices: readonly number[]; throttle: number },
): Promise<string[]> {
  const s = life.settings;
  const vs = tasks.map((t) => t.v);
  const v0 = vs[0];
  if (!v0) return [];
  refuseHost(life, v0);
  const backend = life.backendFor(v0.spec);
  if (!backend.launchArray)
    throw invalid(
      `the ${v0.spec.backend} backend has no array submission`,
      "run the array on this machine or an SSH host",
    );
  // the parents once for every task (the same launch): resolved IDs in each task's spec and fingerprint
  const after = await life.dependencies.plan(v0);
  if (after) {
    for (const v of vs) {
      v.spec = { ...v.spec, after: v0.spec.after! };
      v.fingerprint = sha256Hex(canonicalJson(v.spec));
    }
  }
  const jobs: StoredJob[] = [];
  const todo: { job: StoredJob; v: ValidatedLaunch; index: number }[] = [];
  let resumed = false;
  for (const [n, v] of vs.entries()) {
    const res = life.store.reserve(rowOf(life, v, "queued"), true);
    if (res.kind === "conflict" || res.kind === "duplicate") {
      throw reusedRequestId(v, res.job);
    }
    jobs.push(res.job);
    const index = tasks[n]!.index;
    if (res.kind !== "replay") {
      todo.push({ job: res.job, v, index });
      continue;
    }
    // a task an earlier submit reserved but never handed to the scheduler (that process is gone): launched now
    const j = res.job;
    const owners = s.launchOwners;
    if (
      owners &&
      j.launcher &&
      j.backend_id === null &&
      !isTerminal(j.state) &&
      j.cancel_requested_at === null &&
      owners.isGone(j.launcher) &&
      life.store.claimLaunch(j.job_id, j.launcher, owners.self())
    ) {
      resumed = true;
      todo.push({ job: life.store.get(j.job_id)!, v, index });
    }
  }
  if (todo.length === 0) return jobs.map((j) => j.job_id);
  if (process.env.AWAITLESS_TEST_CRASH_AFTER_RESERVE === "1") process.exit(99);
  // a parent already ended so that no task can run: every task ends dependency_failed, nothing is submitted
  if (after?.failed) {
    for (const t of todo) await endDependencyFailed(life, t.job, after.failed);
    return jobs.map((j) => j.job_id);
  }
  let ids: (Job["backend_id"] | Error)[];
  try {
    ids = await backend.launchArray(
      todo.map((t) => ({
        index: t.index,
        input: {
          job: t.job,
          secretValues: t.v.secretValues,
          graceSeconds: s.graceSeconds,
          logCapBytes: s.logCapBytes,
          ...(after ? { after } : {}),
        },
      })),
      { ...array, resumed },
    );
  } catch (e) {
    ids = todo.map(() => (e instanceof Error ? e : new Error(String(e))));
  }
  // after sbatch, before any task records its Slurm ID: a resubmit must find the array by its tag
  if (process.env.AWAITLESS_TEST_CRASH_AFTER_LAUNCH === "1") process.exit(98);
  todo.forEach((t, n) => {
    const id = ids[n];
    if (id instanceof Error || id === undefined || id === null) finishWithError(life, t.job, id);
    else life.store.setBackendId(t.job.job_id, id);
  });
  return jobs.map((j) => j.job_id);
}

async function replayOf(life: LifecycleDeps, jobId: string): Promise<SubmitResponse> {
  const job = await life.refresh(jobId);
  return {
    job_id: jobId,
    state: job.state,
    backend: job.backend,
    idempotent_replay: true,
    job: await life.toStatus(job),
  };
}

function jobDirFor(life: LifecycleDeps, jobId: string): string {
  return join(dirname(life.store.path), "jobs", jobId);
}

/** What `submit again` asks for: the job's own spec as a new launch (allowed to duplicate the active one). */
export function againRequest(spec: JobSpec): LaunchRequest {
  return {
    argv: spec.argv,
    cwd: spec.cwd,
    env: spec.env,
    secret_env: spec.secret_env,
    backend: spec.backend,
    ...(spec.host !== null ? { host: spec.host } : {}),
    // an array task submitted again is a standalone job: not in the array's private queue (nor counted in it)
    ...(spec.queue !== null && arrayOfQueue(spec.queue) === undefined ? { queue: spec.queue } : {}),
    ...(spec.resources ? { resources: spec.resources } : {}),
    ...(spec.timeout_seconds !== null ? { timeout_seconds: spec.timeout_seconds } : {}),
    ...(spec.stall_timeout_seconds !== null ? { stall_timeout_seconds: spec.stall_timeout_seconds } : {}),
    artifacts: spec.artifacts,
    slurm_options: spec.slurm_options,
    ...(spec.name !== null ? { name: spec.name } : {}),
    ...(spec.after ? { after: spec.after.map((d) => `${d.job_id}:${d.on}`) } : {}),
    ...(spec.log_dir ? { log_dir: spec.log_dir } : {}),
    // as the job was: a config default changed since does not change it
    keep_leftovers: spec.keep_leftovers === true,
    allow_duplicate: true,
  };
}
