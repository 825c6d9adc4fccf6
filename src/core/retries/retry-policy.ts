// Retries (`--retries N --retry-on …`, MCP `retries`/`retry_on`): the policy's syntax, which ends each class
// covers, the backoff, and where each attempt's files live. Pure; the retry itself is JobService's (retries/retry-attempt.ts).

import type { BackendCapabilities } from "../backend/backend.ts";
import { schedulerJobIdOf } from "../model/backend-id.ts";
import type { TerminalDecision } from "../model/decision.ts";
import { invalid } from "../model/errors.ts";
import type { BackendId, Job, RetryClass, RetryPolicy } from "../model/job.ts";
import { didYouMean } from "../util/nearest-name.ts";

export const RETRY_CLASSES: readonly RetryClass[] = ["lost", "infrastructure", "exit"];
const MAX_RETRIES = 100;
/** The first retry waits the backoff; each later one twice the one before, at most this long. */
export const MAX_BACKOFF_SECONDS = 3600;
export const DEFAULT_BACKOFF_SECONDS = 10;
/** Failed ends the infrastructure caused: a launch that failed, and the scheduler's node/boot failure or final preemption. */
const INFRASTRUCTURE_FAILURES: readonly string[] = ["launch_failed", "node_fail", "boot_fail", "preempted"];

/** The policy of a launch request; undefined when it asks for no retries (0 or absent). */
export function parseRetry(retries: unknown, retryOn: unknown, backoff: unknown): RetryPolicy | undefined {
  if (retries === undefined) {
    if (retryOn !== undefined || backoff !== undefined) {
      throw invalid(
        "retry classes or a retry backoff were given without a number of retries",
        "give a number of retries too (1 or more)",
      );
    }
    return undefined;
  }
  if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) {
    throw invalid(`bad retries ${JSON.stringify(retries)}`, `give a whole number 0–${MAX_RETRIES}`);
  }
  const given = retryOn === undefined ? ["infrastructure"] : retryOn;
  if (!Array.isArray(given) || given.length === 0) {
    throw invalid(
      `bad retry classes ${JSON.stringify(retryOn)}`,
      "give one or more of lost, infrastructure, exit",
    );
  }
  const on: RetryClass[] = [];
  for (const c of given) {
    if (typeof c !== "string" || !(RETRY_CLASSES as readonly string[]).includes(c)) {
      const near = typeof c === "string" ? didYouMean(c, RETRY_CLASSES) : "";
      throw invalid(
        `bad retry class ${JSON.stringify(c)}${near}`,
        "give one or more of lost, infrastructure, exit",
      );
    }
    if (!on.includes(c as RetryClass)) on.push(c as RetryClass);
  }
  const b = backoff ?? DEFAULT_BACKOFF_SECONDS;
  if (typeof b !== "number" || !Number.isFinite(b) || b < 0 || b > MAX_BACKOFF_SECONDS) {
    const over = typeof b === "number" && b > MAX_BACKOFF_SECONDS;
    throw invalid(
      over
        ? `retry backoff of ${b}s is longer than the most, ${MAX_BACKOFF_SECONDS}s (1h): later retries double it up to that`
        : `bad retry backoff ${JSON.stringify(backoff)}`,
      `give a backoff from 0 to ${MAX_BACKOFF_SECONDS} seconds (1h), e.g. 30s or 10m`,
    );
  }
  if (retries === 0) return undefined;
  return { retries, on: on.sort(), backoff_seconds: b };
}

/** Which classes an end belongs to: none for a success, a cancel, a timeout or a dependency that failed. */
export function endClasses(d: TerminalDecision): RetryClass[] {
  if (d.to === "lost") return ["lost", "infrastructure"];
  if (d.to !== "failed") return [];
  if (d.reason !== null && INFRASTRUCTURE_FAILURES.includes(d.reason)) return ["infrastructure"];
  return d.exit_code !== null || d.signal !== null ? ["exit"] : [];
}

/** Does this end of attempt `job.attempt` get another attempt? Never after a cancel request. */
export function retryDue(job: Job, d: TerminalDecision): boolean {
  const p = job.spec.retry;
  if (!p || job.cancel_requested_at !== null) return false;
  if (attemptOf(job) > p.retries) return false;
  return endClasses(d).some((c) => p.on.includes(c));
}

export function attemptOf(job: Pick<Job, "attempt">): number {
  return job.attempt ?? 1;
}

/** Seconds to wait before attempt `next` (2, 3, …): the backoff, doubling, capped. */
export function backoffBefore(policy: RetryPolicy, next: number): number {
  return Math.min(policy.backoff_seconds * 2 ** Math.max(0, next - 2), MAX_BACKOFF_SECONDS);
}

/** Attempt N ≥ 2 lives in `attempts/N` under the first attempt's directory; the first in that directory itself. */
export function attemptSuffix(attempt: number): string {
  return attempt <= 1 ? "" : `/attempts/${attempt}`;
}

/** What tags an attempt where the job ID alone would name every attempt (a Slurm job's name): job_…, job_….N. */
export function attemptKey(job: Pick<Job, "job_id" | "attempt">): string {
  const n = attemptOf(job);
  return n <= 1 ? job.job_id : `${job.job_id}.${n}`;
}

/** The first attempt's directory, from the directory of any attempt. */
export function firstAttemptDir(job: Pick<Job, "job_dir" | "attempt">): string {
  const s = attemptSuffix(attemptOf(job));
  return s && job.job_dir.endsWith(s) ? job.job_dir.slice(0, -s.length) : job.job_dir;
}

/**
 * Slurm sets SLURM_ARRAY_TASK_ID only in an array's own sbatch: a retried array task's later attempt, a single Slurm
 * job, is given its first attempt's task ID (from that attempt's Slurm ID, ARRAYJOB_TASK). Empty for other jobs
 * (those of backends without native arrays).
 */
export function arrayTaskEnv(
  can: Pick<BackendCapabilities, "nativeArrays">,
  first: BackendId | null | undefined,
): Record<string, string> {
  const id = schedulerJobIdOf(first);
  const m = can.nativeArrays && id !== undefined ? /^\d+_(\d+)$/.exec(id) : null;
  return m ? { SLURM_ARRAY_TASK_ID: m[1]! } : {};
}
