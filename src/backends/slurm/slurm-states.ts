// Owns the meaning of Slurm's words: exit codes and the mapping of squeue/sacct job lines to scheduler facts (phase,
// end reason, exit as reported); what they mean for a job is for src/core/rules/reconcile.ts. "Unsettled": no final
// answer from squeue or sacct yet for a job out of the queue.
import type { SchedulerEnd } from "../../core/model/scheduler-facts.ts";
import type { SlurmRow } from "./slurm-queries.ts";

export * from "./slurm-queries.ts";

// ---------------------------------------------------------------- exit codes
const SIGNALS =
  "HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM STKFLT CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ VTALRM PROF WINCH IO PWR SYS".split(
    " ",
  );

export interface SlurmExit {
  exitCode: number;
  /** `KILL`, `TERM` … (no SIG prefix, like the wrapper's records) when the batch script died of a signal (exitCode is then 128 + n). */
  signal?: string;
  /** False when sacct reported `N:0`: it prints codes ≥ 128 minus 128, so N may really be N + 128. */
  exact: boolean;
}

/** `7:0` → exit 7; `0:9` → KILL, exit 137; `0:0` → 0. Slurm's `0:125` OOM marker and other non-signals → undefined. */
export function parseSlurmExitCode(
  raw: string | undefined,
  source: "sacct" | "scontrol",
): SlurmExit | undefined {
  const m = /^(\d+):(\d+)$/.exec(raw ?? "");
  if (m === null) return undefined;
  const code = Number(m[1]);
  const sig = Number(m[2]);
  if (sig > 0) {
    const name = SIGNALS[sig - 1];
    return name === undefined ? undefined : { exitCode: 128 + sig, signal: name, exact: true };
  }
  return { exitCode: code, exact: source === "scontrol" || code === 0 };
}

// ---------------------------------------------------------------- mapping to facts
export type SlurmStatus =
  | { kind: "active"; state: "queued" | "running"; statusMessage: string }
  /** Slurm stopped the job but will run it again (requeue, preemption, suspension): keep the current active state. */
  | { kind: "interrupted"; statusMessage: string }
  | { kind: "terminal"; end: SchedulerEnd; statusMessage: string; exit?: SlurmExit }
  /** squeue no longer lists the job but sacct is not final yet (accounting lag): wait up to slurm_accounting_grace. */
  | { kind: "unsettled"; statusMessage: string }
  /** Neither squeue nor sacct knows the job. */
  | { kind: "missing"; statusMessage: string };

const PENDING_REASONS: Record<string, string> = {
  Resources: "waiting for free resources",
  Priority: "waiting behind higher-priority jobs",
  Dependency: "waiting for a dependency",
  BeginTime: "waiting for its begin time",
  JobHeldUser: "held by its owner (release with scontrol release)",
  JobHeldAdmin: "held by an administrator",
  PartitionConfig: "the request does not fit the partition's configuration and may never start",
  ReqNodeNotAvail: "requested nodes are not available",
};
const RUNNING = new Set(["RUNNING", "CONFIGURING", "COMPLETING", "STAGE_OUT", "SIGNALING"]);
const INTERRUPTED = new Set([
  "PREEMPTED",
  "REQUEUED",
  "REQUEUE_HOLD",
  "REQUEUE_FED",
  "RESIZING",
  "SUSPENDED",
  "STOPPED",
  "SPECIAL_EXIT",
  "RESV_DEL_HOLD",
]);
const REQUEUED = new Set(["REQUEUED", "PREEMPTED", "REQUEUE_HOLD", "REQUEUE_FED"]);
const TERMINAL: Record<string, { end: SchedulerEnd; what: string }> = {
  COMPLETED: { end: "completed", what: "completed" },
  FAILED: { end: "failed", what: "failed" },
  CANCELLED: { end: "cancelled", what: "was cancelled" },
  TIMEOUT: { end: "time_limit", what: "reached its time limit" },
  DEADLINE: { end: "deadline", what: "reached its deadline" },
  OUT_OF_MEMORY: { end: "out_of_memory", what: "ran out of memory" },
  NODE_FAIL: { end: "node_fail", what: "lost its node (NODE_FAIL)" },
  BOOT_FAIL: { end: "boot_fail", what: "could not boot its node (BOOT_FAIL)" },
  REVOKED: { end: "revoked", what: "was revoked (it runs on another federated cluster)" },
};

/** Maps one job (allocation) line. PREEMPTED maps to interrupted here; observeSlurmJob decides when it is final. */
export function mapSlurmRow(row: SlurmRow, source: "squeue" | "sacct" | "scontrol"): SlurmStatus {
  const label = `Slurm job ${row.slurmJobId}`;
  const why = row.reason === undefined ? "" : ` (${row.reason})`;
  if (row.slurmState === "PENDING") {
    const described = row.reason === undefined ? undefined : PENDING_REASONS[row.reason];
    return {
      kind: "active",
      state: "queued",
      statusMessage: `${label} pending${described === undefined ? "" : `: ${described}`}${why}`,
    };
  }
  if (RUNNING.has(row.slurmState))
    return { kind: "active", state: "running", statusMessage: `${label} ${row.slurmState.toLowerCase()}` };
  if (INTERRUPTED.has(row.slurmState)) {
    return {
      kind: "interrupted",
      statusMessage: `${label} ${row.slurmState.toLowerCase()}${why}; Slurm will run it again`,
    };
  }
  const t = TERMINAL[row.slurmState];
  if (t === undefined)
    return {
      kind: "interrupted",
      statusMessage: `${label} is in Slurm state ${row.slurmState}, which Awaitless does not know${why}`,
    };
  const exit =
    row.slurmState === "COMPLETED"
      ? { exitCode: 0, exact: true }
      : parseSlurmExitCode(row.exitCode, source === "scontrol" ? "scontrol" : "sacct");
  const by = row.cancelledByUid === undefined ? "" : ` by uid ${row.cancelledByUid}`;
  const code =
    exit === undefined || exit.exitCode === 0
      ? ""
      : exit.signal !== undefined
        ? `, killed by signal ${exit.signal}`
        : `, exit code ${exit.exitCode}${exit.exact ? "" : " (or that plus 128)"}`;
  return {
    kind: "terminal",
    end: t.end,
    statusMessage: `${label} ${t.what}${by}${code}`,
    ...(exit === undefined || (exit.exitCode === 0 && t.end !== "completed") ? {} : { exit }),
  };
}

/**
 * Combines this poll's squeue and sacct job lines for one job. squeue is fresh for active jobs (sacct lags 1–3 s at
 * start); sacct's job line is the final word once squeue has dropped the job (step lines are ignored: they are
 * rewritten racily after cancel and timeout).
 */
export function observeSlurmJob(rows: { squeue?: SlurmRow; sacct?: SlurmRow }): SlurmStatus {
  const { squeue, sacct } = rows;
  if (squeue !== undefined) {
    const fromQueue = mapSlurmRow(squeue, "squeue");
    // being requeued (squeue: COMPLETING, then PENDING again): the job has run before and will run again
    if (
      fromQueue.kind === "active" &&
      (REQUEUED.has(sacct?.slurmState ?? "") || /requeue/i.test(squeue.reason ?? ""))
    ) {
      return {
        kind: "interrupted",
        statusMessage: `${fromQueue.statusMessage}; Slurm requeued it and will run it again`,
      };
    }
    if (fromQueue.kind !== "terminal" || sacct === undefined) return fromQueue;
  }
  if (sacct !== undefined) {
    const fromAccounting = mapSlurmRow(sacct, "sacct");
    if (fromAccounting.kind === "terminal") return fromAccounting;
    // not in squeue: a PREEMPTED job that would be requeued is listed as pending again
    if (sacct.slurmState === "PREEMPTED") {
      return {
        kind: "terminal",
        end: "preempted",
        statusMessage: `Slurm job ${sacct.slurmJobId} was preempted and will not run again`,
      };
    }
    return {
      kind: "unsettled",
      statusMessage: `Slurm job ${sacct.slurmJobId} left the queue; accounting still says ${sacct.slurmState}`,
    };
  }
  return { kind: "missing", statusMessage: "neither squeue nor sacct lists the job" };
}
