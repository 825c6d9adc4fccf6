// The terminal result the fake job service stores when a fake job ends (PROTOCOL.md "Terminal result" shape).
import type { JobResult, TerminalState } from "../../src/core/job.ts";
import type { JobStatus } from "../../src/core/service-types.ts";

export function fakeResult(
  s: JobStatus,
  final: TerminalState,
  exitCode: number,
  stdout: string,
  stderr: string,
): JobResult {
  const finishedAt = s.finished_at ?? new Date().toISOString();
  return {
    job_id: s.job_id,
    name: s.name,
    backend: s.backend,
    host: s.host,
    state: final,
    exit_code: s.exit_code,
    signal: null,
    reason: final === "cancelled" ? "cancel_requested" : null,
    created_at: s.created_at,
    started_at: s.started_at,
    finished_at: finishedAt,
    duration_seconds: (Date.parse(finishedAt) - Date.parse(s.created_at)) / 1000,
    stdout_tail: stdout,
    stderr_tail: stderr,
    stdout_bytes: s.stdout_bytes,
    stderr_bytes: s.stderr_bytes,
    stdout_dropped_bytes: 0,
    stderr_dropped_bytes: 0,
    truncated: false,
    descendants_alive: false,
    digest: final === "succeeded" ? [] : [`exit ${exitCode}`],
    artifacts: [],
    parsed_results: {},
    error: null,
    snapshot: { sha256: "0".repeat(64), captured_at: finishedAt },
  };
}
