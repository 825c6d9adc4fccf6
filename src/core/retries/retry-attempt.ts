// The retry of a job's attempt (`--retries`): no daemon, so whichever reader reconciles the job's end (CLI wait,
// status, list, the MCP server) keeps the attempt's result, reserves the next attempt in the store (once among
// concurrent readers) and, once its backoff has passed, claims and launches it (at most once per attempt).
import type { Backend } from "../backend/backend.ts";
import type { TerminalDecision } from "../model/decision.ts";
import { isTerminal } from "../model/job.ts";
import type { BuiltResult } from "../results/result-builder.ts";
import { launchAbandoned } from "../rules/launch-owner.ts";
import type { ServiceSettings } from "../service/service-context.ts";
import type { JobStore, StoredJob } from "../store/job-store.ts";
import { attemptOf, attemptSuffix, backoffBefore, firstAttemptDir } from "./retry-policy.ts";

export interface RetryDeps {
  store: JobStore;
  settings: ServiceSettings;
  backendFor(job: StoredJob): Backend;
  /** Launches the job row's current attempt (its launch already claimed by this process). */
  launch(job: StoredJob, secretValues: Record<string, string>): Promise<void>;
}

/** A retried job whose current attempt has not been launched yet (waiting out its backoff, or being launched). */
export function awaitingAttempt(job: StoredJob): boolean {
  return attemptOf(job) > 1 && !isTerminal(job.state) && job.backend_id === null && job.started_at === null;
}

/** reserved: the next attempt is reserved; moved: another reader already did; refused: this end is final. */
export type RetryBegun = "reserved" | "moved" | "refused";

/**
 * Keeps the ended attempt (its own sealed result) and reserves the next one; the job stays active. False when the
 * attempt may not be retried after all (its command may still run) or another reader reserved it first.
 */
export async function beginRetry(
  deps: RetryDeps,
  job: StoredJob,
  d: TerminalDecision,
  built: BuiltResult,
): Promise<RetryBegun> {
  const backend = deps.backendFor(job);
  // A killed wrapper may leave its command running: a second copy is started only once the first is stopped.
  if (d.reason === "wrapper_killed" && backend.stopLeftover) {
    const stop = await backend.stopLeftover(job, deps.settings.graceSeconds).catch(() => null);
    if (!stop || stop.action === "refused") return "refused";
  }
  const attempt = attemptOf(job);
  const next = attempt + 1;
  const policy = job.spec.retry!;
  const wait = backoffBefore(policy, next);
  // The backoff counts from the attempt's end as recorded (the wrapper's clock may be a few ms ahead of this look).
  const ended = Date.parse(d.finished_at ?? "");
  const retryAt = new Date(Math.max(Date.now(), Number.isNaN(ended) ? 0 : ended) + wait * 1000).toISOString();
  // what ended this attempt, as the wait for the next one says it (service/status.ts)
  const why =
    d.to === "failed" && d.exit_code !== null ? `with exit code ${d.exit_code}` : `(${d.reason ?? d.to})`;
  return deps.store.attempts.begin(
    job.job_id,
    {
      attempt,
      job_dir: job.job_dir,
      backend_id: job.backend_id,
      state: d.to,
      reason: d.reason,
      exit_code: d.exit_code,
      signal: d.signal,
      launched_at: job.launcher?.at ?? job.created_at,
      started_at: d.started_at,
      finished_at: d.finished_at,
      result_json: built.json,
      result_sha256: built.sha256,
    },
    {
      job_dir: `${firstAttemptDir(job)}${attemptSuffix(next)}`,
      retry_at: retryAt,
      message: `attempt ${attempt} ${d.to} ${why}`,
    },
  );
}

/**
 * Launches a reserved attempt whose time has come (claimed in the store, so exactly one reader launches it), or
 * finishes the launch of one whose claiming process died before launching. True when this call launched it.
 */
export async function launchDueAttempt(deps: RetryDeps, job: StoredJob): Promise<boolean> {
  const owners = deps.settings.launchOwners;
  if (!owners) return false;
  const backend = deps.backendFor(job);
  const attempt = attemptOf(job);
  const self = owners.self();
  let claimed = false;
  if (job.launcher === null || job.launcher === undefined) {
    if (!job.retry_at || job.retry_at > self.at) return false;
    const state = job.spec.queue !== null || job.spec.resources ? "queued" : "starting";
    claimed = deps.store.attempts.claimLaunch(job.job_id, attempt, self, state);
  } else if (await launchAbandoned(job, backend, owners)) {
    claimed = deps.store.claimLaunch(job.job_id, job.launcher, self);
  }
  if (!claimed) return false;
  const now = deps.store.get(job.job_id)!;
  // The secrets were given at submit; each attempt's 0600 spec copy holds them (the first attempt's, read back).
  const first = deps.store.attempts.list(job.job_id)[0];
  const secrets = first
    ? await backend.secretValues({ ...now, job_dir: first.job_dir, attempt: 1 }).catch(() => ({}))
    : {};
  await deps.launch(now, secrets);
  return true;
}

/**
 * While a reserved attempt waits out its backoff (not yet claimed): when it starts and what to say of the wait, with
 * how the attempt before it ended (kept in the job's status message since it was reserved).
 */
export function retryWait(job: StoredJob): { at: string; message: string } | undefined {
  if (!awaitingAttempt(job) || job.launcher || !job.retry_at || !job.spec.retry) return undefined;
  const secs = Math.ceil(msUntilAttempt(job) / 1000);
  const about =
    secs < 60 ? `${secs}s` : secs < 5400 ? `${Math.round(secs / 60)} min` : `${Math.round(secs / 3600)} h`;
  const when = secs <= 0 ? "now" : `in about ${about}`;
  // a message stored before this wording also said when the attempt starts
  const before = job.status_message?.replace(
    / of \d+ (\w+) \((.*)\); attempt \d+ starts at \S+$/,
    " $1 ($2)",
  );
  const next = `waiting for attempt ${attemptOf(job)} of ${job.spec.retry.retries + 1} ${when}`;
  return { at: job.retry_at, message: before ? `${next}; ${before}` : next };
}

/** When a waiting reader should look again for a reserved attempt: its launch time, or now. */
export function msUntilAttempt(job: StoredJob): number {
  if (!job.retry_at) return 0;
  return Math.max(0, Date.parse(job.retry_at) - Date.now());
}
