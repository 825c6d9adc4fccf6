// The status view of a job as stored (no observation): what `status`, `list` and MCP show.

import type { JobStatus } from "../model/service-api.ts";
import { retryWait } from "../retries/retry-attempt.ts";
import type { StoredJob } from "../store/rows.ts";
import { type Redactor, shapeRedactor } from "../util/redact.ts";

export function jobStatus(job: StoredJob, redactor: Redactor = shapeRedactor): JobStatus {
  const elapsed = elapsedSeconds(job);
  const retry = retryWait(job);
  return {
    job_id: job.job_id,
    name: job.name,
    backend: job.backend,
    host: job.host,
    queue: job.queue,
    state: job.state,
    status_message: retry ? retry.message : job.status_message,
    // Command lines are shown, so they pass through the job's redactor (its secrets, credential shapes).
    argv: job.spec.argv.map((a) => redactor.redact(a)),
    cwd: job.spec.cwd,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    ...(elapsed === null ? {} : { elapsed_seconds: elapsed }),
    exit_code: job.exit_code,
    signal: job.signal,
    reason: job.reason,
    stdout_bytes: job.stdout_bytes ?? 0,
    stderr_bytes: job.stderr_bytes ?? 0,
    last_output_at: null,
    client_request_id: job.client_request_id,
    backend_id: job.backend_id,
    ...(job.spec.after ? { after: job.spec.after.map((d) => `${d.job_id}:${d.on}`) } : {}),
    ...(job.spec.retry ? { attempt: job.attempt ?? 1, attempts: job.spec.retry.retries + 1 } : {}),
    ...(retry ? { next_attempt_at: retry.at } : {}),
  };
}

/**
 * How long the command has run (started_at → finished_at or now); while it has not started yet, how long it has
 * waited since creation; null for a finished job whose command never started (it never ran for any time).
 */
function elapsedSeconds(job: StoredJob): number | null {
  if (job.started_at === null && job.finished_at !== null) return null;
  const startMs = Date.parse(job.started_at ?? job.created_at);
  const endMs = job.finished_at ? Date.parse(job.finished_at) : Date.now();
  return Math.max(0, Math.round((endMs - startMs) / 100) / 10);
}

export function formatDuration(totalSeconds: number): string {
  const s = Math.floor(totalSeconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
