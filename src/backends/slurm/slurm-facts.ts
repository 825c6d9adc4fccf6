// Owns what a Slurm observation reports to the reconcile rules: one job's SlurmStatus, times and waits as
// SchedulerFacts, with Slurm's own words (its options, settings, hints). No verdicts: src/core/rules/reconcile.ts decides.
// "Settle": Slurm's view of a job reaching its final state (unsettled: squeue/sacct give no final answer yet).
import { slurmIdOf } from "../../core/model/backend-id.ts";
import type { Job } from "../../core/model/job.ts";
import type { SchedulerFacts, SchedulerPhase, SchedulerWords } from "../../core/model/scheduler-facts.ts";
import type { SlurmRow } from "./slurm-queries.ts";
import type { SlurmExit, SlurmStatus } from "./slurm-states.ts";

/** How long a plain exit record waits for Slurm's final state when no setting says otherwise. */
export const DEFAULT_EXIT_SETTLE_MS = 30_000;

export interface Patience {
  accountingGraceMs: number;
  exitSettleMs: number;
  launchGraceMs: number;
}

/** Slurm's words in the rules' messages and hints, for one job (its time limit). */
export function slurmWords(job: Job): SchedulerWords {
  const limit = job.spec.slurm_options.time;
  return {
    name: "Slurm",
    time_limit: limit === undefined ? "the Slurm time limit" : `the Slurm time limit (time=${limit})`,
    grace_setting: "slurm_accounting_grace",
    hints: {
      time_limit: "raise the limit (the job's Slurm time option or its timeout) or make the command faster",
      deadline: "raise the limit (the job's Slurm time option or its timeout) or make the command faster",
      out_of_memory: "request more memory (the job's Slurm mem option) or make the command use less",
      node_fail: "Slurm lost the node the job ran on; submit it again",
      boot_fail: "Slurm could not boot the job's node; submit it again",
      preempted: "a higher-priority job preempted it; submit it again (or use a QOS that is not preemptible)",
      lost: "neither Slurm nor the job's files say how it ended; check `sacct -j ID` on the cluster and run it again if needed",
    },
    launch_failed: {
      reason: "the batch script could not start the wrapper",
      suggestion:
        "check that slurm_job_dir is on a file system the compute nodes see (its slurm-batch.err says why)",
    },
    not_found: {
      suggestion: "submit the command again (a new client_request_id): Slurm has no job with its tag",
      never_launched:
        "the client that created the job died before sbatch answered, and no Slurm job carries its tag",
      reply_lost: `sbatch's reply was lost (${slurmIdOf(job)?.submit_unconfirmed ?? ""}) and no Slurm job carries the tag`,
    },
  };
}

const PHASE: Record<SlurmStatus["kind"], SchedulerPhase> = {
  active: "running",
  interrupted: "interrupted",
  terminal: "ended",
  unsettled: "unknown",
  missing: "unknown",
};

export interface FactsInput {
  job: Job;
  slurmJobId: string;
  status: SlurmStatus;
  /** The sacct job line the status came from (start and end times). */
  sacct?: SlurmRow;
  /** The exact exit code from `scontrol show job` (sacct loses 128 on codes ≥ 128). */
  scontrolExit?: SlurmExit;
  unsettledSinceMs?: number;
  exitSeenSinceMs?: number;
  batchStderr?: string;
  patience: Patience;
}

export function slurmFacts(input: FactsInput): SchedulerFacts {
  const { status } = input;
  const phase = status.kind === "active" && status.state === "queued" ? "pending" : PHASE[status.kind];
  const x = status.kind === "terminal" ? (input.scontrolExit ?? status.exit) : undefined;
  const started = slurmTime(input.sacct?.start);
  const ended = slurmTime(input.sacct?.end);
  return {
    job_id: input.slurmJobId,
    phase,
    message: status.statusMessage,
    ...(status.kind === "terminal" ? { end: status.end } : {}),
    ...(x ? { exit: { exit_code: x.exitCode, signal: x.signal ?? null } } : {}),
    ...(status.kind === "unsettled" ? { listed: true } : status.kind === "missing" ? { listed: false } : {}),
    ...(started ? { started_at: started } : {}),
    ...(ended ? { ended_at: ended } : {}),
    ...(input.unsettledSinceMs !== undefined ? { unsettled_since_ms: input.unsettledSinceMs } : {}),
    ...(input.exitSeenSinceMs !== undefined ? { exit_seen_since_ms: input.exitSeenSinceMs } : {}),
    ...(input.batchStderr !== undefined ? { batch_stderr: input.batchStderr } : {}),
    patience: patienceOf(input.patience),
    words: slurmWords(input.job),
  };
}

/** Facts of a submission whose reply was lost: still looking for its tag, or (notFound) the search found nothing. */
export function unconfirmedFacts(
  job: Job,
  message: string,
  notFound: boolean,
  submittedAtMs: number,
  patience: Patience,
): SchedulerFacts {
  return {
    job_id: null,
    phase: "unconfirmed",
    message,
    not_found: notFound,
    submitted_at_ms: submittedAtMs,
    patience: patienceOf(patience),
    words: slurmWords(job),
  };
}

function patienceOf(p: Patience): SchedulerFacts["patience"] {
  return {
    accounting_grace_ms: p.accountingGraceMs,
    exit_settle_ms: p.exitSettleMs,
    launch_grace_ms: p.launchGraceMs,
  };
}

/** sacct prints local times without a zone (`2026-11-30T11:45:45`); read them as this machine's local time. */
export function slurmTime(text: string | undefined): string | undefined {
  if (text === undefined || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(text)) return undefined;
  const ms = new Date(text).getTime();
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
