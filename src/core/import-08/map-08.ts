// How a row of Awaitless 0.8's store maps onto our model: spec, reason, error, artifacts, history, what is skipped.

import type { ArtifactEntry, BackendName, ErrorInfo, JobSpec, TerminalState } from "../model/job.ts";
import { isTerminal, JOB_STATES, type JobState } from "../model/job.ts";
import type { ImportedJob } from "../store/rows.ts";
import type { Job08 } from "./store-08.ts";

const STAGE: Record<Exclude<TerminalState, "succeeded">, string> = {
  failed: "runtime_failed",
  cancelled: "cancelled",
  timed_out: "timed_out",
  lost: "lost",
};

export function reasonOf08(j: Job08, state: TerminalState): string | null {
  if (state === "succeeded") return null;
  if (state === "failed") {
    if (j.exit_code === null) return "launch_failed";
    return j.exit_code === 127 ? "command_not_found" : "nonzero_exit";
  }
  return state;
}

export function errorOf08(j: Job08, state: TerminalState, reason: string | null): ErrorInfo | null {
  if (state === "succeeded" || reason === null) return null;
  const detail = j.error ?? (typeof j.snapshot?.error === "string" ? j.snapshot.error : undefined);
  return {
    stage: STAGE[state],
    reason,
    retryable: false,
    suggestion: "this job ran under Awaitless 0.8; read its logs, fix the command and run it again",
    ...(detail ? { detail } : {}),
  };
}

/** 0.8's artifact entries as recorded at completion (never re-read: the files may have changed since). */
export function artifactsOf(j: Job08, remote: boolean): ArtifactEntry[] {
  const recorded = Array.isArray(j.snapshot?.artifacts)
    ? (j.snapshot.artifacts as Record<string, unknown>[])
    : null;
  if (!recorded) {
    return j.artifacts.map((p) => ({
      path: p,
      declared_path: p,
      exists: false,
      remote,
      reason: "Awaitless 0.8 kept no result for this job, so its artifacts were not recorded",
    }));
  }
  return recorded.map((a) => {
    const path = String(a.path ?? "");
    const e: ArtifactEntry = {
      path,
      declared_path: typeof a.declared_path === "string" ? a.declared_path : path,
      exists: a.exists === true,
      remote: a.remote === true || remote,
    };
    if (typeof a.size_bytes === "number") e.size_bytes = a.size_bytes;
    if (typeof a.sha256 === "string") e.sha256 = a.sha256;
    if (typeof a.modified_at === "string") e.modified_at = a.modified_at;
    if (Object.hasOwn(a, "content")) e.content = a.content;
    if (typeof a.parse_error === "string") e.parse_error = a.parse_error;
    return e;
  });
}

export function specOf(j: Job08, backend: BackendName): JobSpec {
  return {
    argv: j.command,
    cwd: j.cwd ?? "",
    env: j.env,
    secret_env: [],
    backend,
    host: j.host,
    queue: null,
    timeout_seconds: j.timeout_seconds,
    stall_timeout_seconds: j.stall_timeout_seconds,
    artifacts: j.artifacts,
    slurm_options: {},
    name: j.name,
  };
}

export function historyOf(j: Job08): ImportedJob["history"] {
  let from: JobState | null = null;
  return j.events
    .filter((e) => (JOB_STATES as readonly string[]).includes(e.state))
    .map((e, i) => {
      const h = { from_state: from, to_state: e.state as JobState, at: e.occurred_at, reason: e.detail };
      if (i === 0) h.reason = "created under Awaitless 0.8";
      from = e.state as JobState;
      return h;
    });
}

export function skipReason(j: Job08): string | null {
  if (!["local", "ssh", "slurm"].includes(j.backend)) return `backend ${j.backend} is unknown here`;
  if (!(JOB_STATES as readonly string[]).includes(j.state) && j.state !== "pending") {
    return `state ${j.state} is unknown here`;
  }
  if (j.state === "pending" || !isTerminal(j.state as JobState)) {
    if (j.backend === "local") return null; // watched until 0.8 records its end
    return `still ${j.state} under Awaitless 0.8 on ${j.host ?? "its host"}: 0.8 follows ${j.backend} jobs (0.8's \`awaitless wait ${j.job_id}\`); import again once it finished`;
  }
  if (!j.finished_at) return "0.8 recorded no finish time";
  return null;
}
