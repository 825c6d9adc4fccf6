// Owns what one Slurm observation means for a job: Slurm's view combined with the wrapper's records into a reconcile
// Decision, or undefined to let the wrapper rules (src/core/reconcile.ts) decide. Pure.
import type { ExitInfo, StartedInfo } from "../../core/backend.ts";
import type { Job, TerminalState } from "../../core/job.ts";
import { type Decision, err } from "../../core/reconcile.ts";
import type { SlurmRow } from "./slurm-queries.ts";
import type { SlurmExit, SlurmStatus } from "./slurm-states.ts";

export interface VerdictInput {
  job: Job;
  nowMs: number;
  slurmJobId: string;
  status: SlurmStatus;
  /** The sacct job line the status came from (start and end times). */
  sacct?: SlurmRow;
  started: StartedInfo | null;
  exit: ExitInfo | null;
  /** The exact exit code from `scontrol show job` (sacct loses 128 on codes ≥ 128). */
  scontrolExit?: SlurmExit;
  /** Since when squeue/sacct have not given a final answer for a job that left the queue (or vanished). */
  unsettledSinceMs?: number;
  accountingGraceMs: number;
  /**
   * Since when the wrapper's exit record is known (the earlier of its finished_at and when this process first read
   * it). A plain exit waits this long for Slurm's final word (OUT_OF_MEMORY is only known once Slurm ends the job).
   */
  exitSeenSinceMs?: number;
  exitSettleMs: number;
  /** The batch shell's stderr (slurm-batch.err), for launch failures. */
  batchStderr?: string;
}

/** An exit record that says plainly how the command ended: its exit code, no signal from outside. */
function isPlainExit(x: ExitInfo | null): boolean {
  return x !== null && (x.reason !== "exited" || x.signal === null);
}

/** How long a plain exit record waits for Slurm's final state when no setting says otherwise. */
export const DEFAULT_EXIT_SETTLE_MS = 30_000;

/** True while a plain exit record should still wait for Slurm's final word (it could say OUT_OF_MEMORY). */
function awaitingSlurm(input: VerdictInput): boolean {
  const since = input.exitSeenSinceMs ?? input.nowMs;
  return input.nowMs - since < input.exitSettleMs;
}

function exitWords(x: ExitInfo): string {
  if (x.reason === "timed_out") return "the command hit its timeout";
  if (x.reason === "cancelled") return "the command was cancelled";
  if (x.reason === "launch_failed") return "the command could not be started";
  return `the command exited with code ${x.exit_code ?? "unknown"}`;
}

function keep(job: Job, message: string): Decision {
  return { kind: "active", to: job.state, status_message: message };
}

export function slurmVerdict(input: VerdictInput): Decision | undefined {
  const { job, status, exit } = input;
  switch (status.kind) {
    case "active": {
      if (status.state === "queued") {
        // Pending. A job that already ran was requeued: it keeps its state.
        if (job.state === "queued" && exit === null)
          return { kind: "active", to: "queued", status_message: status.statusMessage };
        return keep(job, status.statusMessage);
      }
      if (exit !== null) {
        // The wrapper is done; Slurm is still tearing down. A plain exit is the truth; a signal may be Slurm's own
        // (time limit, scancel, OOM kill): wait for Slurm's word.
        if (isPlainExit(exit)) {
          return awaitingSlurm(input)
            ? keep(job, `${status.statusMessage}; ${exitWords(exit)}, waiting for Slurm's final state`)
            : undefined;
        }
        return keep(
          job,
          `${status.statusMessage}; the command ended by signal ${exit.signal}, waiting for Slurm's reason`,
        );
      }
      if (input.started === null) {
        const to = job.state === "queued" ? "starting" : job.state;
        return {
          kind: "active",
          to,
          status_message: `${status.statusMessage}; the wrapper is starting the command`,
        };
      }
      return undefined; // running: the wrapper rules (running, stalled) apply
    }
    case "interrupted":
      return keep(job, status.statusMessage);
    case "unsettled":
    case "missing": {
      if (exit !== null && isPlainExit(exit)) {
        return awaitingSlurm(input)
          ? keep(
              job,
              `Slurm job ${input.slurmJobId}: ${status.statusMessage}; ${exitWords(exit)}, waiting for accounting`,
            )
          : undefined;
      }
      const since = input.unsettledSinceMs ?? input.nowMs;
      if (input.nowMs - since < input.accountingGraceMs) {
        return keep(job, `Slurm job ${input.slurmJobId}: ${status.statusMessage}; waiting for accounting`);
      }
      if (exit !== null) return undefined;
      return lost(
        input,
        status.kind === "missing" ? "slurm_job_vanished" : "slurm_state_unknown",
        status.statusMessage,
      );
    }
    case "terminal":
      return terminal(input, status);
  }
}

function terminal(
  input: VerdictInput,
  status: Extract<SlurmStatus, { kind: "terminal" }>,
): Decision | undefined {
  const { job, exit } = input;
  const plainEnd = status.reason === undefined && (status.state === "succeeded" || status.state === "failed");
  // COMPLETED/FAILED: the wrapper's record is the truth when it exists (exact code, its own timeout and cancel).
  if (plainEnd && exit !== null) return undefined;
  if (exit !== null && (exit.reason === "timed_out" || exit.reason === "launch_failed")) return undefined;
  const code = exit
    ? { exit_code: exit.exit_code, signal: exit.signal }
    : (() => {
        const x = input.scontrolExit ?? status.exit;
        return x ? { exit_code: x.exitCode, signal: x.signal ?? null } : { exit_code: null, signal: null };
      })();
  const base = {
    kind: "terminal" as const,
    ...code,
    finished_at: exit?.finished_at ?? slurmTime(input.sacct?.end) ?? new Date(input.nowMs).toISOString(),
    started_at: input.started?.started_at ?? slurmTime(input.sacct?.start) ?? job.started_at,
    descendants_alive: exit?.descendants_alive ?? false,
  };
  const to: TerminalState = status.state;
  const msg = status.statusMessage;
  switch (to) {
    case "succeeded":
      return { ...base, exit_code: 0, signal: null, to, reason: null, error: null };
    case "cancelled": {
      const ours = job.cancel_requested_at !== null;
      const detail = ours ? msg : `${msg}; the cancel did not come from Awaitless`;
      return {
        ...base,
        to,
        reason: "cancelled",
        error: err("cancelled", "cancelled", false, "resubmit the command if it still needs to run", detail),
      };
    }
    case "timed_out": {
      const limit = job.spec.slurm_options.time;
      const what = limit === undefined ? "the Slurm time limit" : `the Slurm time limit (time=${limit})`;
      return {
        ...base,
        to,
        reason: status.reason ?? "time_limit",
        error: err(
          "timed_out",
          `${what} was reached`,
          true,
          "raise the limit (the job's Slurm time option or its timeout) or make the command faster",
          msg,
        ),
      };
    }
    case "failed":
      return failed(input, status, base, msg);
    case "lost":
      return lost(input, "slurm_lost", msg);
  }
}

type TerminalBase = Omit<Extract<Decision, { kind: "terminal" }>, "to" | "reason" | "error">;

function failed(
  input: VerdictInput,
  status: Extract<SlurmStatus, { kind: "terminal" }>,
  base: TerminalBase,
  msg: string,
): Decision {
  const hints: Record<string, string> = {
    out_of_memory: "request more memory (the job's Slurm mem option) or make the command use less",
    node_fail: "Slurm lost the node the job ran on; submit it again",
    boot_fail: "Slurm could not boot the job's node; submit it again",
    preempted: "a higher-priority job preempted it; submit it again (or use a QOS that is not preemptible)",
  };
  if (status.reason !== undefined) {
    const retryable = status.reason !== "out_of_memory";
    // Slurm's word wins over a plain exit: e.g. a shell whose child was OOM-killed and that went on to exit 0
    const x = input.exit;
    const detail =
      x !== null && x.signal === null && x.exit_code !== null
        ? `${msg}; the command itself exited with code ${x.exit_code} after Slurm's ${status.reason} verdict on the job`
        : msg;
    return {
      ...base,
      to: "failed",
      reason: status.reason,
      error: err(
        "runtime_failed",
        status.reason,
        retryable,
        hints[status.reason] ?? "read the status message and the stderr tail",
        detail,
      ),
    };
  }
  if (input.started === null && input.exit === null) {
    const detail = [msg, input.batchStderr?.trim().slice(-1000)].filter((s) => s).join("; batch stderr: ");
    return {
      ...base,
      to: "failed",
      reason: "launch_failed",
      error: err(
        "launch_failed",
        "the batch script could not start the wrapper",
        false,
        "check that slurm_job_dir is on a file system the compute nodes see (its slurm-batch.err says why)",
        detail,
      ),
    };
  }
  const what = base.signal
    ? `killed by signal ${base.signal}`
    : `exited with code ${base.exit_code ?? "unknown"}`;
  return {
    ...base,
    to: "failed",
    reason: base.signal ? "signaled" : "nonzero_exit",
    error: err(
      "runtime_failed",
      `the job ${what}`,
      false,
      "read the digest and stderr tail; fix the command and run it again",
      msg,
    ),
  };
}

function lost(input: VerdictInput, reason: string, detail: string): Decision {
  return {
    kind: "terminal",
    to: "lost",
    exit_code: null,
    signal: null,
    reason,
    finished_at: new Date(input.nowMs).toISOString(),
    started_at: input.started?.started_at ?? input.job.started_at,
    descendants_alive: false,
    error: err(
      "lost",
      reason,
      true,
      "neither Slurm nor the job's files say how it ended; check `sacct -j ID` on the cluster and run it again if needed",
      `Slurm job ${input.slurmJobId}: ${detail} (for longer than slurm_accounting_grace)`,
    ),
  };
}

/** sacct prints local times without a zone (`2026-11-30T11:45:45`); read them as this machine's local time. */
export function slurmTime(text: string | undefined): string | undefined {
  if (text === undefined || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(text)) return undefined;
  const ms = new Date(text).getTime();
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}
