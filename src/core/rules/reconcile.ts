// Every reconcile rule in one place: what the wrapper's records, liveness and a scheduler's facts mean for a job's
// state, for local, SSH and Slurm jobs alike. Pure. "Settle" means only a scheduler's view of a job reaching its final
// state (exit_settle, unsettled_since).

import { wrapperPidOf } from "../model/backend-id.ts";
import { type Decision, err, lostDecision } from "../model/decision.ts";
import type { Job } from "../model/job.ts";
import { HEARTBEAT_SECONDS, LEGACY_HEARTBEAT_SECONDS, lostAfterSeconds } from "../model/liveness.ts";
import type { Observation, QueuedInfo } from "../model/observation.ts";
import type { SchedulerFacts } from "../model/scheduler-facts.ts";
import {
  batchFailed,
  batchLaunchFailed,
  cancelledByScheduler,
  endBase,
  failedByScheduler,
  keep,
  lostByScheduler,
  submissionNotFound,
  timedOutByScheduler,
} from "./scheduler-outcomes.ts";

export { type Decision, err } from "../model/decision.ts";

export interface ReconcileContext {
  nowMs: number;
  launchGraceSeconds: number;
  /** A parent with retries is still active: the scheduler's "never satisfied" may be about an earlier attempt. */
  parentMayRetry?: boolean;
}

export function decide(job: Job, observed: Observation, ctx: ReconcileContext): Decision {
  // Rule 1d: a job the scheduler runs again (a requeue) finds the earlier run's records in its directory until its
  // wrapper clears them: a record older than this run's start (by more than the clocks' slack) is ignored.
  const obs = observed.scheduler ? recordsOfThisRun(observed, observed.scheduler.started_at) : observed;
  // Rule 1: terminal state is immutable.
  if (job.state === "succeeded" || job.state === "failed" || job.state === "cancelled")
    return { kind: "none" };
  if (job.state === "timed_out" || job.state === "lost") return { kind: "none" };

  // Rule 1b: an outcome another program's records state (Awaitless 0.8's store) is taken as it is.
  if (obs.recorded) return obs.recorded;

  // Rule 1c: what a scheduler says (Slurm: pending reasons, its own time limit, OOM, requeue) decides first, by the
  // scheduler rules S1–S16 below; where they leave it to the wrapper's records, rules 2–7.
  if (obs.scheduler) {
    const d = schedulerRules(job, obs, obs.scheduler, ctx.nowMs, ctx.parentMayRetry === true);
    if (d) return d;
  }

  // Rule 2a: an exit record while the wrapper lives is the wrapper's only when it names that wrapper and the
  // command's own process is gone (the wrapper writes it after the command was reaped); any other was written by
  // someone else (the command itself can write its job directory): ignored, the job keeps running.
  if (obs.exit && obs.wrapperAlive === true && !exitIsTheWrappers(obs)) {
    if (obs.started)
      return {
        kind: "active",
        to: job.state === "stalled" ? "stalled" : "running",
        status_message:
          "an exit record that the job's wrapper did not write was ignored; the command still runs",
        started_at: obs.started.started_at,
      };
    return { kind: "none" };
  }

  // Rule 2: the exit record is the truth about how the command ended, whoever reads it first.
  if (obs.exit) return fromExit(job, obs);

  // Rule 3: an unreachable target says nothing about the job: keep its state.
  if (obs.unreachable) return { kind: "unreachable", message: obs.unreachable };

  // Rule 4: a boot ID different from the one at launch means the machine rebooted under the job.
  if (obs.started?.boot_id && obs.bootIdNow && obs.started.boot_id !== obs.bootIdNow) {
    return lost(
      job,
      obs,
      "host_rebooted",
      "the machine rebooted while the job ran; its exit was never recorded",
    );
  }

  // Rule 5: the wrapper is gone without writing an exit record: it was killed.
  if (obs.wrapperAlive === false) {
    if (obs.started || wrapperPidOf(job.backend_id)) {
      return lost(job, obs, "wrapper_killed", "the wrapper process died without recording an exit (killed?)");
    }
  }

  // Rule 5b: where the wrapper cannot be checked (Slurm's compute nodes, a host without /proc), a heartbeat older
  // than the lost-after threshold of its interval means the wrapper is gone.
  if (obs.started && obs.wrapperAlive === null) {
    const silent = heartbeatSilence(obs, ctx.nowMs);
    if (silent) {
      return lost(
        job,
        obs,
        "heartbeat_lost",
        `no heartbeat for ${silent.seconds}s; a wrapper that writes one every ${silent.interval}s counts as lost after ${silent.lostAfter}s`,
      );
    }
  }

  // Rule 6: reserved but never launched (a client died between reservation and launch): after the launch
  // grace, counted from the reservation or from a retry's claim of the abandoned launch, it is lost.
  if (!obs.started && obs.wrapperAlive !== true) {
    const since = Math.max(Date.parse(job.created_at), Date.parse(job.launcher?.at ?? "") || 0);
    const ageMs = ctx.nowMs - since;
    if (ageMs > ctx.launchGraceSeconds * 1000 && !wrapperPidOf(job.backend_id)) {
      return lost(job, obs, "launch_interrupted", "the client that created the job died before launching it");
    }
    return { kind: "none" };
  }

  // Rule 6b: the wrapper waits on the target for its queue or resources: still queued, saying where in line.
  if (!obs.started && obs.queued) {
    return { kind: "active", to: "queued", status_message: queuedMessage(obs.queued) };
  }

  // Rule 7: started → running; no output or progress for stall_timeout → stalled (observation only).
  if (obs.started) {
    const stallS = job.spec.stall_timeout_seconds;
    const hb = obs.heartbeat;
    if (stallS && hb) {
      const quietMs = ctx.nowMs - Date.parse(hb.last_change_at);
      if (quietMs >= stallS * 1000) {
        return {
          kind: "active",
          to: "stalled",
          status_message: `no output for ${Math.round(quietMs / 1000)}s (stall timeout ${stallS}s)`,
          started_at: obs.started.started_at,
        };
      }
    }
    return { kind: "active", to: "running", status_message: null, started_at: obs.started.started_at };
  }
  return { kind: "none" };
}

// The scheduler rules: what a scheduler's facts mean with the wrapper's records; undefined leaves it to rules 2–7.
function schedulerRules(
  job: Job,
  obs: Observation,
  s: SchedulerFacts,
  nowMs: number,
  parentMayRetry: boolean,
): Decision | undefined {
  const x = obs.exit;
  const name = s.words.name;
  switch (s.phase) {
    case "unconfirmed":
      // Rule S1: a submission whose reply was lost is looked for by its tag; found nowhere once the launch grace and
      // the accounting grace have passed since it was submitted, it is lost; until then it keeps its state.
      if (
        s.not_found &&
        nowMs - (s.submitted_at_ms ?? nowMs) >= s.patience.launch_grace_ms + s.patience.accounting_grace_ms
      )
        return submissionNotFound(job, s, nowMs);
      return keep(job, s.message);
    case "pending":
      // Rule S2a: the scheduler can never start it (a parent ended so that its dependency cannot hold) and the
      // wrapper never started: cancelled, reason dependency_failed; the command never ran. Not while a parent with
      // retries is active: its ended attempt is not its last, and its next one becomes the dependency (redepend).
      if (s.dependency_never_satisfied && !parentMayRetry && obs.started === null && x === null)
        return dependencyFailed(
          {
            exit_code: null,
            signal: null,
            finished_at: new Date(nowMs).toISOString(),
            started_at: null,
            descendants_alive: false,
          },
          (job.spec.after ?? []).map((d) => `${d.job_id}:${d.on}`).join(", ") || null,
        );
      // Rule S2: pending → queued, saying why; a job that already ran (requeued) keeps its state.
      if (job.state === "queued" && x === null)
        return { kind: "active", to: "queued", status_message: s.message };
      return keep(job, s.message);
    case "running":
      if (x !== null) {
        // Rule S3: the wrapper is done while the scheduler tears down: a plain exit waits up to exit_settle for the
        // scheduler's final word (it learns of an OOM kill only when it ends the job), then the record decides (rule 2).
        if (isPlainExit(x)) {
          return awaitingScheduler(s, nowMs)
            ? keep(job, `${s.message}; ${exitWords(x)}, waiting for ${name}'s final state`)
            : undefined;
        }
        // Rule S4: an exit by a signal may be the scheduler's own (time limit, scancel, OOM kill): wait for its reason.
        return keep(
          job,
          `${s.message}; the command ended by signal ${x.signal}, waiting for ${name}'s reason`,
        );
      }
      // Rule S5: allocated, the wrapper not started yet → starting.
      if (obs.started === null) {
        const to = job.state === "queued" ? "starting" : job.state;
        return { kind: "active", to, status_message: `${s.message}; the wrapper is starting the command` };
      }
      // Rule S6: running with the wrapper started, while the scheduler does not say yet when this run started (its
      // accounting lags the queue at a start), for a job that ran before: the records may be an earlier run's (rule
      // 1d), so they decide nothing. A job that never ran has no earlier records.
      if (s.started_at === undefined && (job.state === "running" || job.state === "stalled"))
        return keep(job, s.message);
      // Rule S6b: running with this run's wrapper started: the wrapper rules (running, stalled, heartbeat_lost).
      return undefined;
    case "interrupted":
      // Rule S7: stopped to run again (requeued, preempted, suspended) or in a state we do not know: keep the state.
      return keep(job, s.message);
    case "unknown": {
      // Rule S8: out of the queue without a final accounting line (or listed nowhere): a plain exit record waits up
      // to exit_settle for it, then decides (rule 2).
      if (x !== null && isPlainExit(x)) {
        return awaitingScheduler(s, nowMs)
          ? keep(job, `${name} job ${s.job_id}: ${s.message}; ${exitWords(x)}, waiting for accounting`)
          : undefined;
      }
      // Rule S9: otherwise wait out the accounting grace; then a record by a signal decides (rule 2), and without
      // one the job is lost: its state unknown (listed, not final) or vanished (listed nowhere).
      if (nowMs - (s.unsettled_since_ms ?? nowMs) < s.patience.accounting_grace_ms)
        return keep(job, `${name} job ${s.job_id}: ${s.message}; waiting for accounting`);
      if (x !== null) return undefined;
      const reason = `${name.toLowerCase()}_${s.listed ? "state_unknown" : "job_vanished"}`;
      return lostByScheduler(job, obs, s, nowMs, reason, s.words.hints.lost);
    }
    case "ended":
      return schedulerEnd(job, obs, s, nowMs);
  }
}

function schedulerEnd(job: Job, obs: Observation, s: SchedulerFacts, nowMs: number): Decision | undefined {
  const x = obs.exit;
  const end = s.end ?? "failed";
  // Rule S10: completed or failed with an exit record: the record decides (exact code, its own timeout and cancel).
  if ((end === "completed" || end === "failed") && x !== null) return undefined;
  // Rule S11: the wrapper's own timeout or launch failure decides, whatever the scheduler's end.
  if (x !== null && (x.reason === "timed_out" || x.reason === "launch_failed")) return undefined;
  const base = endBase(job, obs, s, nowMs);
  switch (end) {
    case "completed":
      // Rule S12: completed without an exit record says nothing about the command (the record, not the
      // wrapper's own status, holds the command's exit): wait out the accounting grace for the record (a shared file system may show it late), then lost.
      return unrecorded(
        job,
        obs,
        s,
        nowMs,
        "exit_not_recorded",
        `${s.message}, but the wrapper recorded no exit status`,
      );
    case "cancelled":
      // Rule S13: cancelled by the scheduler: cancelled (a cancel Awaitless did not ask for says so).
      return cancelledByScheduler(job, base, s);
    case "time_limit":
    case "deadline":
      // Rule S14: the scheduler's time limit or deadline → timed_out with that reason.
      return timedOutByScheduler(base, s, end);
    case "failed":
      // Rule S15: failed before the wrapper started: launch_failed with the batch shell's stderr.
      if (obs.started === null && x === null) return batchLaunchFailed(base, s);
      // Rule S15b: the batch shell (the wrapper) died by a signal after it started, with no exit record: the wrapper
      // writes one for a command killed by a signal and then exits with a status (0 or 1), so the wrapper itself was
      // killed → lost, wrapper_killed, as rule 5 says on local and SSH; after the accounting grace (a late record).
      if (x === null && s.exit?.signal) {
        const detail = `${s.message}: the wrapper was killed by signal ${s.exit.signal} and recorded no exit status`;
        return unrecorded(job, obs, s, nowMs, "wrapper_killed", detail);
      }
      // Rule S15c: otherwise the scheduler's exit code (no record to say better).
      return batchFailed(base, s);
    default:
      // Rule S16: out of memory, node or boot failure, final preemption, revocation → failed with that reason; the
      // scheduler's word beats a plain exit (a shell whose child was OOM-killed may go on to exit 0).
      return failedByScheduler(obs, base, s, end);
  }
}

/** How far the wrapper's clock (a compute node's) may lag the scheduler's before a record reads as an earlier run's. */
export const RUN_START_SLACK_MS = 2000;

/** The wrapper's records without those written before this run's start (ISO): an earlier run's, left by a requeue. */
export function recordsOfThisRun<T extends Pick<Observation, "started" | "heartbeat" | "exit">>(
  r: T,
  runStartedAt: string | undefined,
): T {
  const start = Date.parse(runStartedAt ?? "");
  if (Number.isNaN(start)) return r;
  const earlier = (at: string | undefined) => at !== undefined && Date.parse(at) < start - RUN_START_SLACK_MS;
  const started = r.started && earlier(r.started.started_at) ? null : r.started;
  const heartbeat = r.heartbeat && earlier(r.heartbeat.at) ? null : r.heartbeat;
  const exit = r.exit && earlier(r.exit.finished_at) ? null : r.exit;
  if (started === r.started && heartbeat === r.heartbeat && exit === r.exit) return r;
  return { ...r, started, heartbeat, exit };
}

/** No exit record where one was due: kept while the accounting grace lasts (a shared file system may show it late), then lost. */
function unrecorded(
  job: Job,
  obs: Observation,
  s: SchedulerFacts,
  nowMs: number,
  reason: string,
  detail: string,
): Decision {
  if (nowMs - (s.unsettled_since_ms ?? nowMs) < s.patience.accounting_grace_ms)
    return keep(job, `${s.message}; waiting for the wrapper's exit record`);
  const suggestion = "its output so far is in the tails; run it again if it must finish";
  return lostByScheduler(job, obs, s, nowMs, reason, suggestion, detail);
}

/** An exit record that says plainly how the command ended: its exit code, no signal from outside. */
function isPlainExit(x: NonNullable<Observation["exit"]>): boolean {
  return x.reason !== "exited" || x.signal === null;
}

/** True while a plain exit record still waits for the scheduler's final word (it could say out of memory). */
function awaitingScheduler(s: SchedulerFacts, nowMs: number): boolean {
  return nowMs - (s.exit_seen_since_ms ?? nowMs) < s.patience.exit_settle_ms;
}

function exitWords(x: NonNullable<Observation["exit"]>): string {
  if (x.reason === "timed_out") return "the command hit its timeout";
  if (x.reason === "cancelled") return "the command was cancelled";
  if (x.reason === "launch_failed") return "the command could not be started";
  return `the command exited with code ${x.exit_code ?? "unknown"}`;
}

/** The heartbeat's silence when it exceeds the lost-after threshold (from `started` when none was written yet). */
export function heartbeatSilence(
  obs: Observation,
  nowMs: number,
): { seconds: number; interval: number; lostAfter: number } | null {
  const last = obs.heartbeat?.at ?? obs.started?.started_at;
  if (!last) return null;
  const interval = obs.heartbeat
    ? (obs.heartbeat.interval_seconds ?? LEGACY_HEARTBEAT_SECONDS)
    : HEARTBEAT_SECONDS;
  const lostAfter = lostAfterSeconds(interval);
  const seconds = Math.floor((nowMs - Date.parse(last)) / 1000);
  return seconds > lostAfter ? { seconds, interval, lostAfter } : null;
}

/** "queued behind 2 jobs in queue gpu (1 of 1 running)", "next in line; waiting for gpu=0", "admitted; starting". */
export function queuedMessage(q: QueuedInfo): string {
  if (q.after) return afterMessage(q.after);
  if (q.admitted) return "admitted; starting";
  const inQueue = q.queue ? ` in queue ${q.queue} (${q.running} of ${q.concurrency} running)` : "";
  if (q.ahead > 0) return `queued behind ${q.ahead} job${q.ahead === 1 ? "" : "s"}${inQueue}`;
  if (q.held) return `next in line; waiting for ${q.resources.join(", ")} to be released`;
  return `next in line${inQueue}`;
}

/**
 * Rule 2a's test: the exit record names the live wrapper of `started` (a wrapper that tracks the job's processes always
 * signs its record; an older one signs none), and the command's own process is not alive.
 */
function exitIsTheWrappers(obs: Observation): boolean {
  const x = obs.exit!;
  const s = obs.started;
  if (obs.commandAlive === true) return false;
  if (!s) return true;
  if (x.wrapper === undefined) return s.tracking === undefined;
  if (x.wrapper.pid !== s.wrapper_pid) return false;
  return !s.proc_start || !x.wrapper.proc_start || s.proc_start === x.wrapper.proc_start;
}

/** Said on a failed result when the wrapper recorded a full disk (no_space=1). */
export const NO_SPACE_DETAIL =
  "the disk or quota holding the job's files was full while it ran: output written then is missing, and the command may have failed because of it";

// Rule 2 in detail; a full disk the wrapper recorded is said on the result (detail and digest).
function fromExit(job: Job, obs: Observation): Decision {
  const d = exitDecision(job, obs);
  if (d.kind !== "terminal" || !obs.exit?.no_space) return d;
  return { ...d, no_space: true, ...(d.error ? { error: { ...d.error, detail: NO_SPACE_DETAIL } } : {}) };
}

/** What to do after the exit codes a shell gives a command it could not run (the wrapper says which on stderr). */
const EXIT_SUGGESTIONS: Record<string, string> = {
  "127":
    "the command, or the interpreter its first line (#!) names, was not found on the target: check its name and PATH, and the stderr tail",
  // found but not runnable: a directory, or a file without the execute permission
  "126":
    "the command could not be executed (exit 126; the stderr tail says why): a script needs the execute permission (chmod +x) or to be run through its interpreter (sh SCRIPT)",
};

function exitDecision(job: Job, obs: Observation): Decision {
  const x = obs.exit!;
  const started_at = obs.started?.started_at ?? job.started_at;
  const base = {
    kind: "terminal" as const,
    exit_code: x.exit_code,
    signal: x.signal,
    finished_at: x.finished_at,
    started_at,
    descendants_alive: x.descendants_alive,
    ...(x.leftovers ? { leftovers: x.leftovers } : {}),
    ...(x.resources ? { resources: x.resources } : {}),
  };
  if (x.reason === "dependency_failed") return dependencyFailed(base, x.dependency ?? null);
  if (x.reason === "cancelled" || (job.cancel_requested_at && x.signal && x.exit_code !== 0)) {
    return {
      ...base,
      to: "cancelled",
      reason: "cancelled",
      error: err("cancelled", "cancelled", false, "resubmit the command if it still needs to run"),
    };
  }
  if (x.reason === "timed_out") {
    const t = job.spec.timeout_seconds;
    return {
      ...base,
      to: "timed_out",
      reason: "timed_out",
      error: err(
        "timed_out",
        `runtime limit of ${t}s reached`,
        true,
        "raise the job's runtime limit (its timeout) or make the command faster",
      ),
    };
  }
  if (x.reason === "launch_failed") {
    return {
      ...base,
      to: "failed",
      reason: "launch_failed",
      error: err(
        "launch_failed",
        "the command could not be started",
        false,
        "check that the working directory exists on the target and the command is installed; see the stderr tail",
      ),
    };
  }
  if (x.exit_code === 0) return { ...base, to: "succeeded", reason: null, error: null };
  // The kernel's OOM killer ended processes of the job's cgroup: a command killed by KILL ran out of memory.
  const ooms = x.resources?.oom_kills ?? 0;
  if (ooms > 0 && x.signal === "KILL") {
    return {
      ...base,
      to: "failed",
      reason: "out_of_memory",
      error: err(
        "runtime_failed",
        "out_of_memory",
        false,
        "the command ran out of memory: give it more (or run it where there is more), or make it use less",
        `the kernel's OOM killer ended ${ooms} process${ooms === 1 ? "" : "es"} of the job`,
      ),
    };
  }
  const what = x.signal ? `killed by signal ${x.signal}` : `exited with code ${x.exit_code}`;
  const notFound = x.exit_code === 127 && !x.signal;
  return {
    ...base,
    to: "failed",
    reason: notFound ? "command_not_found" : x.signal ? "signaled" : "nonzero_exit",
    error: err(
      "runtime_failed",
      `the command ${what}`,
      false,
      (!x.signal && EXIT_SUGGESTIONS[String(x.exit_code)]) ||
        "read the digest and stderr tail; fix the command and run it again",
      ooms > 0
        ? `the kernel's OOM killer ended ${ooms} process${ooms === 1 ? "" : "es"} of the job`
        : undefined,
    ),
  };
}

function lost(job: Job, obs: Observation, reason: string, detail: string): Decision {
  return lostDecision({
    reason,
    finished_at: obs.heartbeat?.at ?? new Date().toISOString(),
    started_at: obs.started?.started_at ?? job.started_at,
    suggestion:
      reason === "launch_interrupted"
        ? "submit the command again (a new client_request_id) — it never ran"
        : "its output so far is in the tails; run it again if it must finish",
    detail,
  });
}

/** "waiting for job_X to succeed": the first parent condition a held job still waits for (JOB_ID:ON). */
export function afterMessage(after: string): string {
  const at = after.lastIndexOf(":");
  const id = at > 0 ? after.slice(0, at) : after;
  const on = at > 0 ? after.slice(at + 1) : "ok";
  const what = on === "any" ? "to end" : on === "failed" ? "to fail" : "to succeed";
  return `waiting for ${id} ${what}`;
}

/** A dependency that could no longer hold: the job ends cancelled and its command never ran. */
export function dependencyFailed(
  base: {
    exit_code: number | null;
    signal: string | null;
    finished_at: string;
    started_at: string | null;
    descendants_alive: boolean;
  },
  dependency: string | null,
): Decision {
  const at = dependency ? dependency.lastIndexOf(":") : -1;
  const id = dependency && at > 0 ? dependency.slice(0, at) : dependency;
  const on = dependency && at > 0 ? dependency.slice(at + 1) : null;
  const what = on === "failed" ? "succeeded" : "did not succeed";
  return {
    ...base,
    kind: "terminal",
    to: "cancelled",
    exit_code: null,
    reason: "dependency_failed",
    error: err(
      "dependency_failed",
      id ? `${id} ${what}, so this job (after ${dependency}) never ran` : "a dependency can no longer hold",
      false,
      "fix the parent job and submit both again",
      dependency ? `after ${dependency}` : undefined,
    ),
  };
}
