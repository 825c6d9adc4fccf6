// The status view of a job as stored (no observation): what `status`, `list` and MCP show.
import { shapeRedactor } from "./redact.ts";
import type { JobStatus } from "./service-types.ts";
import type { StoredJob } from "./store-rows.ts";

export function jobStatus(job: StoredJob): JobStatus {
  const startMs = Date.parse(job.started_at ?? job.created_at);
  const endMs = job.finished_at ? Date.parse(job.finished_at) : Date.now();
  return {
    job_id: job.job_id,
    name: job.name,
    backend: job.backend,
    host: job.host,
    queue: job.queue,
    state: job.state,
    status_message: job.status_message,
    // Command lines are shown, so they pass through the credential-shape redactor like every output.
    argv: job.spec.argv.map((a) => shapeRedactor.redact(a)),
    cwd: job.spec.cwd,
    created_at: job.created_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    elapsed_seconds: Math.max(0, Math.round((endMs - startMs) / 100) / 10),
    exit_code: job.exit_code,
    signal: job.signal,
    reason: job.reason,
    stdout_bytes: job.stdout_bytes ?? 0,
    stderr_bytes: job.stderr_bytes ?? 0,
    last_output_at: null,
    client_request_id: job.client_request_id,
    backend_id: job.backend_id,
  };
}

export function formatDuration(totalSeconds: number): string {
  const s = Math.floor(totalSeconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
