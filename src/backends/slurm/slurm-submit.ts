// Owns submission: `sbatch --parsable` with the script on stdin, and adoption by tag when the reply is lost or
// ambiguous — a submission is never repeated.
import { AwaitlessError } from "../../core/model/errors.ts";
import type { CommandRunner } from "./runner.ts";
import { slurmJobName } from "./sbatch-script.ts";
import {
  findTaggedJobs,
  parseSacct,
  parseSbatchReply,
  parseSqueue,
  sacctMineArgs,
  squeueByNameArgs,
} from "./slurm-queries.ts";

export interface SubmitOutcome {
  /** Known when sbatch replied, or when the job was found by its tag. */
  slurmJobId?: string;
  /** The ID came from find-by-tag, not from sbatch's reply. */
  adopted: boolean;
  /** Why the submission is unconfirmed (set when no ID is known). */
  unconfirmed?: string;
}

export interface TagRef {
  jobId: string;
  jobName?: string;
}

// sbatch messages that leave it open whether the controller accepted the job.
const AMBIGUOUS =
  /timed? ?out|socket|unable to contact|zero bytes|connection|temporarily unavailable|interrupted/i;

/**
 * Slurm job IDs tagged with our job ID: squeue by job name first (it knows a job the moment sbatch is accepted), then
 * the calling user's accounting records (sacct's JobName/Comment can lag). Throws connection_failed when unreachable.
 */
export async function findByTag(
  runner: CommandRunner,
  tag: TagRef,
  since: Date,
  timeoutMs: number,
): Promise<string[]> {
  const q = await runner.exec(squeueByNameArgs(slurmJobName(tag.jobId, tag.jobName)), { timeoutMs });
  if (q.code === 0) {
    const ids = findTaggedJobs(parseSqueue(q.stdout), tag.jobId);
    if (ids.length > 0) return ids;
  }
  const a = await runner.exec(sacctMineArgs(since), { timeoutMs });
  if (a.code !== 0 && q.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `could not look up Slurm jobs tagged ${tag.jobId} on ${runner.label}: ${(a.stderr || q.stderr).trim().slice(0, 300)}`,
      "the Slurm controller or accounting is not answering; Awaitless retries on the next observation",
      { host: runner.label },
    );
  }
  const rows = a.code === 0 ? parseSacct(a.stdout).filter((r) => r.step === undefined) : [];
  return findTaggedJobs(rows, tag.jobId);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Submits once. A definite refusal (sbatch exits non-zero with a plain error) throws launch_failed. A lost or ambiguous
 * reply (timeout, dropped connection, unreadable output) is followed by find-by-tag for up to adoptWindowMs; the
 * outcome is then either the adopted ID or `unconfirmed` (the caller keeps looking by tag; it never resubmits).
 */
export async function submitBatch(
  runner: CommandRunner,
  script: string,
  tag: TagRef,
  /** minPauseMs: the scheduler floor between two looks (slurm_min_poll_interval_seconds). */
  opts: { timeoutMs: number; adoptWindowMs: number; since: Date; minPauseMs?: number },
): Promise<SubmitOutcome> {
  let why: string;
  try {
    const r = await runner.exec(["sbatch", "--parsable"], { stdin: script, timeoutMs: opts.timeoutMs });
    if (r.code === 0) {
      try {
        return { slurmJobId: parseSbatchReply(r.stdout).slurmJobId, adopted: false };
      } catch (e) {
        why = (e as Error).message;
      }
    } else if (AMBIGUOUS.test(r.stderr)) {
      why = `sbatch exited ${r.code}: ${r.stderr.trim().slice(0, 300)}`;
    } else {
      throw new AwaitlessError(
        "launch_failed",
        `sbatch on ${runner.label} refused the job (exit ${r.code}): ${r.stderr.trim().slice(0, 500) || "no message"}`,
        "check the job's Slurm options and the [hosts.NAME.slurm] table against the cluster's partitions and limits",
        { host: runner.label, scheduler_command: "sbatch", scheduler_message: r.stderr.slice(0, 2000) },
      );
    }
  } catch (e) {
    if (!(e instanceof AwaitlessError) || e.code !== "connection_failed") throw e;
    why = `the sbatch reply was lost: ${e.message}`;
  }
  const deadline = Date.now() + opts.adoptWindowMs;
  const floorMs = opts.minPauseMs ?? 0;
  let pauseMs = Math.max(floorMs, 250);
  for (;;) {
    try {
      const ids = await findByTag(runner, tag, opts.since, opts.timeoutMs);
      if (ids[0] !== undefined) return { slurmJobId: ids[0], adopted: true };
    } catch {
      // unreachable for now: keep trying until the window closes
    }
    if (Date.now() + pauseMs > deadline) return { adopted: false, unconfirmed: why };
    await delay(pauseMs);
    pauseMs = Math.max(floorMs, Math.min(2000, pauseMs * 2));
  }
}
