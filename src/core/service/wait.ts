// Waiting on a job: the event-driven wait with its quiet backoff and waited time, the flat wait answer, run (submit
// then wait inline), the progress line, and a wait for any of several jobs to change.
import { isTerminal } from "../model/job.ts";
import type { Observation } from "../model/observation.ts";
import type {
  LaunchRequest,
  RunResponse,
  SubmitResponse,
  WaitOptions,
  WaitResponse,
} from "../model/service-api.ts";
import { readTails } from "../results/result-builder.ts";
import { awaitingAttempt, msUntilAttempt, retryWait } from "../retries/retry-attempt.ts";
import type { StoredJob } from "../store/job-store.ts";
import { isNoSpace } from "../util/no-space.ts";
import { Redactor } from "../util/redact.ts";
import { type LifecycleDeps, noteNoSpace } from "./lifecycle-context.ts";
import { formatDuration } from "./status.ts";

/** Longest gap between re-reads of a waited-on job whose files are watched by events and that does not change. */
export const QUIET_POLL_MAX_MS = 10_000;

function nextAttemptOf(job: StoredJob): { next_attempt_at?: string } {
  const r = retryWait(job);
  return r ? { next_attempt_at: r.at } : {};
}

/** Waits (event-driven, backing off while nothing changes) until the job ends, the deadline or `signal`. */
export async function waitFor(life: LifecycleDeps, jobId: string, opts: WaitOptions): Promise<WaitResponse> {
  const start = Date.now();
  const deadline = opts.timeoutMs === null ? Number.POSITIVE_INFINITY : start + opts.timeoutMs;
  const progressEvery = opts.progressIntervalMs ?? 10_000;
  let nextProgress = start + progressEvery;
  // each look's observation is what the progress line and the answer read: one look, one observation
  let { job, observation } = await life.look(jobId);
  let quietMs = life.settings.pollIntervalMs;
  // A wait on a finished job holds nothing: its answer (waited_seconds included) replays byte-identically.
  const held = !isTerminal(job.state);
  while (!isTerminal(job.state)) {
    const now = Date.now();
    if (now >= deadline || opts.signal?.aborted) break;
    if (opts.onProgress && now >= nextProgress) {
      opts.onProgress((await progressLook(life, job, observation)).message);
      nextProgress = now + progressEvery;
    }
    const slice = Math.min(quietMs, deadline - now, opts.onProgress ? nextProgress - now : Infinity);
    const evented =
      awaitingAttempt(job) && !job.launcher
        ? await sleepFor(Math.max(1, Math.min(slice, msUntilAttempt(job))), opts.signal)
        : await life.backendFor(job).waitForChange(job, Math.max(1, slice), opts.signal);
    const before = `${job.state} ${job.status_message}`;
    ({ job, observation } = await life.look(jobId));
    // With file events a start, exit or cancel ends the wait at once; re-reading a job where nothing happened
    // only catches what no file shows (a killed wrapper), so those re-reads back off (MCP servers hold many waits).
    // A child held for a parent with retries is not quiet: its reader makes that parent's attempts (whose files
    // are not the child's) and records its end.
    const quiet =
      evented === true &&
      before === `${job.state} ${job.status_message}` &&
      !life.dependencies.waitsOnRetried(job);
    quietMs = quiet
      ? Math.min(quietMs * 2, Math.max(life.settings.pollIntervalMs, QUIET_POLL_MAX_MS))
      : life.settings.pollIntervalMs;
  }
  if (held && !opts.untracked) recordWaited(life, jobId, Date.now() - start);
  return waitResponse(life, job, observation, opts.onQuietSeconds);
}

/** Adds one ended wait to the job's waited time; a full store keeps the previous total (said by storeNotices). */
function recordWaited(life: LifecycleDeps, jobId: string, ms: number): void {
  try {
    life.store.addWaited(jobId, ms);
  } catch (e) {
    if (!isNoSpace(e)) throw e;
    noteNoSpace(life);
  }
}

/**
 * The flat wait-like answer (docs/protocol.md, "Waiting and delivery"): result fields and envelope side by side.
 * `observation`: what the look that read `job` observed (null: none; observed here if the answer needs it).
 * `onQuietSeconds`: told, for a pending answer, how long the job has made no output (from the same look).
 */
export async function waitResponse(
  life: LifecycleDeps,
  job: StoredJob,
  observation: Observation | null,
  onQuietSeconds?: WaitOptions["onQuietSeconds"],
): Promise<WaitResponse> {
  const waited_seconds = Math.round(life.store.waitedMs(job.job_id)) / 1000;
  if (isTerminal(job.state)) {
    return {
      ...life.resultOf(job)!,
      job_state: job.state,
      wait_state: "complete",
      delivery_state: "delivered",
      waited_seconds,
    };
  }
  const known = {
    job_id: job.job_id,
    name: job.name,
    backend: job.backend,
    host: job.host,
    state: job.state,
    created_at: job.created_at,
    started_at: job.started_at,
  };
  const unreachable = life.unreachable.get(job.job_id);
  if (unreachable) {
    return {
      ...known,
      job_state: job.state,
      wait_state: "client_timeout",
      delivery_state: "pending",
      waited_seconds,
      status_message: unreachable,
      host_unreachable: unreachable,
    };
  }
  const backend = life.backendFor(job);
  const redactor = new Redactor(Object.values(await backend.secretValues(job)));
  const tails = await readTails(
    backend,
    job,
    life.settings.maxReturnBytes,
    redactor,
    life.settings.logTailLines,
  );
  const progress = await progressLook(life, job, observation);
  onQuietSeconds?.(progress.quietSeconds);
  return {
    ...known,
    stdout_tail: tails.stdout_tail,
    stderr_tail: tails.stderr_tail,
    stdout_bytes: tails.stdout.totalBytes,
    stderr_bytes: tails.stderr.totalBytes,
    truncated: tails.truncated,
    job_state: job.state,
    wait_state: "client_timeout",
    delivery_state: "pending",
    waited_seconds,
    status_message: progress.message,
    ...nextAttemptOf(job),
  };
}

/** Submits, then waits inline up to `inlineTimeoutMs`; a job waiting in line is answered detached at once. */
export async function runJob(
  life: LifecycleDeps,
  submit: (req: LaunchRequest) => Promise<SubmitResponse>,
  req: LaunchRequest,
  inlineTimeoutMs: number,
  opts: Omit<WaitOptions, "timeoutMs">,
): Promise<RunResponse> {
  const sub = await submit(req);
  const subJob = life.getJob(sub.job_id);
  if (isWaitingInLine(subJob)) {
    // A busy queue: the job may wait for hours, so the caller is told at once and collects it later.
    const w = await waitResponse(life, subJob, null, opts.onQuietSeconds);
    return {
      ...w,
      delivery: "detached",
      detach_reason: "queued",
      idempotent_replay: sub.idempotent_replay,
      ...(sub.launch_resumed ? { launch_resumed: true as const } : {}),
    };
  }
  const w = await waitFor(life, sub.job_id, { ...opts, timeoutMs: inlineTimeoutMs });
  const inline = w.wait_state === "complete";
  return {
    ...w,
    delivery: inline ? "inline" : "detached",
    ...(inline ? {} : { detach_reason: "inline_timeout" as const }),
    idempotent_replay: sub.idempotent_replay,
    ...(sub.launch_resumed ? { launch_resumed: true as const } : {}),
  };
}

/** A look's progress line, and how long the job has made no output (since its start while it has written none). */
interface ProgressLook {
  message: string;
  quietSeconds: number | undefined;
}

/** The progress line of a job read by a look that observed `observation` (null: none; observed here if needed). */
async function progressLook(
  life: LifecycleDeps,
  job: StoredJob,
  observation: Observation | null,
): Promise<ProgressLook> {
  const st = await life.toStatus(job);
  const sinceStart = st.elapsed_seconds;
  if (isTerminal(job.state)) return { message: `${job.state}`, quietSeconds: undefined };
  const elapsed = formatDuration(st.elapsed_seconds ?? 0);
  const early = (message: string): ProgressLook => ({ message, quietSeconds: sinceStart });
  if (st.next_attempt_at) return early(st.status_message!);
  if (job.state === "queued" && job.status_message) return early(`${job.status_message}, for ${elapsed}`);
  if (job.state === "starting" || job.state === "queued") return early(`${job.state} for ${elapsed}`);
  const obs = observation ?? (await life.backendFor(job).observe(job, life.dependencies.lookOf(job)));
  const hb = obs.heartbeat;
  // the heartbeat's last change is the command's start until it writes something
  const silent = hb === null || hb.stdout_bytes + hb.stderr_bytes === 0;
  const last = silent ? null : Math.max(0, (Date.now() - Date.parse(hb.last_change_at)) / 1000);
  const tail = last === null ? ", no output yet" : `, last output ${formatDuration(last)} ago`;
  return { message: `${job.state} ${elapsed}${tail}`, quietSeconds: last ?? sinceStart };
}

/** Is this job waiting in line for its queue or resources? */
function isWaitingInLine(job: StoredJob): boolean {
  return (
    job.state === "queued" &&
    (job.spec.queue !== null || job.spec.resources !== undefined || job.spec.after !== undefined)
  );
}

/** Returns once any of the active jobs changes (or `timeoutMs` passes, or `signal` aborts). */
export async function waitForAnyChange(
  life: LifecycleDeps,
  jobIds: string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const jobs = jobIds
    .map((id) => life.store.get(id))
    .filter((j): j is StoredJob => j != null && !isTerminal(j.state));
  if (jobs.length === 0 || signal?.aborted) return;
  const ctl = new AbortController();
  const onAbort = () => ctl.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const watches = jobs.map((j) => life.backendFor(j).waitForChange(j, Math.max(1, timeoutMs), ctl.signal));
    // A change between the caller's last read and the watches being set is seen by one re-read, not missed.
    const before = new Map(jobs.map((j) => [j.job_id, `${j.state} ${j.status_message}`]));
    const changed = (await Promise.all(jobs.map((j) => life.refresh(j.job_id).catch(() => undefined)))).some(
      (j) => j !== undefined && before.get(j.job_id) !== `${j.state} ${j.status_message}`,
    );
    if (!changed) await Promise.race(watches);
  } finally {
    ctl.abort();
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Sleeps `ms` (or until `signal` aborts); false: nothing was watched by events meanwhile. */
function sleepFor(ms: number, signal?: AbortSignal): Promise<false> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve(false);
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
