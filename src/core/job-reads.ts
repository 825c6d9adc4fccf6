// Read-side use cases of the job service: logs, list, inspect, and gc of finished jobs.
import { invalid } from "./errors.ts";
import { isTerminal, JOB_STATES, type JobState, TERMINAL_STATES } from "./job.ts";
import type { JobService } from "./job-service.ts";
import { Redactor, shapeRedactor } from "./redact.ts";
import type { InspectResponse, JobStatus, ListRequest, LogsRequest, LogsResponse } from "./service-types.ts";
import { cleanText, grepLines, tailLines } from "./text.ts";

export async function readLogs(svc: JobService, req: LogsRequest): Promise<LogsResponse> {
  const job = await svc.refresh(req.job_id);
  const backend = svc.backendFor(job);
  const redactor = new Redactor(Object.values(await backend.secretValues(job)));
  const streams = req.stream === "both" || !req.stream ? (["stdout", "stderr"] as const) : [req.stream];
  const maxBytes = req.max_bytes ?? 1024 * 1024;
  const out: LogsResponse = {
    job_id: job.job_id,
    job_state: job.state,
    stdout_bytes: 0,
    stderr_bytes: 0,
    dropped_bytes: { stdout: 0, stderr: 0 },
    truncated: false,
  };
  for (const s of ["stdout", "stderr"] as const) {
    const log = await backend.readLog(job, s, maxBytes);
    out[`${s}_bytes`] = log.totalBytes;
    out.dropped_bytes[s] = log.droppedBytes;
    if (!(streams as readonly string[]).includes(s)) continue;
    let text = redactor.redact(cleanText(log.text));
    if (req.grep !== undefined) text = grepLines(text, req.grep);
    if (req.tail_lines !== undefined) text = tailLines(text, req.tail_lines);
    out[s] = text;
    out.truncated ||= log.truncated;
  }
  return out;
}

export async function listJobs(svc: JobService, req: ListRequest): Promise<JobStatus[]> {
  const limit = req.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw invalid(`bad limit ${limit}`, "use 1–10000");
  let states: readonly JobState[] | undefined;
  if (req.state === "active") states = JOB_STATES.filter((s) => !isTerminal(s));
  else if (req.state === "terminal") states = TERMINAL_STATES;
  else if (req.state !== undefined) {
    if (!JOB_STATES.includes(req.state)) {
      throw invalid(
        `unknown state ${JSON.stringify(req.state)}`,
        `use one of ${JOB_STATES.join(", ")}, active, terminal`,
      );
    }
    states = [req.state];
  }
  // Reconcile the active jobs first so the listing shows fresh states (few are ever active).
  for (const id of svc.store.activeJobIds()) await svc.refresh(id).catch(() => undefined);
  const rows = svc.store.list({
    ...(states ? { states } : {}),
    ...(req.name !== undefined ? { name: req.name } : {}),
    ...(req.host !== undefined ? { host: req.host } : {}),
    ...(req.queue !== undefined ? { queue: req.queue } : {}),
    limit,
  });
  return rows.map((j) => svc.toStatus(j));
}

export async function inspectJob(svc: JobService, jobId: string): Promise<InspectResponse> {
  const job = await svc.refresh(jobId);
  const result = svc.resultOf(job);
  return {
    job: await svc.status(jobId),
    spec: {
      ...job.spec,
      argv: job.spec.argv.map((a) => shapeRedactor.redact(a)),
      env: Object.fromEntries(Object.entries(job.spec.env).map(([k, v]) => [k, shapeRedactor.redact(v)])),
      fingerprint: job.fingerprint,
    },
    history: svc.store.history(jobId),
    job_dir: job.job_dir,
    ...(result ? { result } : {}),
  };
}

/** Removes finished jobs (files, then rows) by age and count; active jobs are never touched. */
export async function collectGarbage(
  svc: JobService,
  o: {
    olderThanSeconds: number | null;
    keep: number | null;
    dryRun: boolean;
  },
): Promise<{ removed: string[] }> {
  const cutoff =
    o.olderThanSeconds === null ? null : new Date(Date.now() - o.olderThanSeconds * 1000).toISOString();
  const victims = svc.store.gcCandidates(cutoff, o.keep);
  if (o.dryRun) return { removed: victims.map((j) => j.job_id) };
  const removed: string[] = [];
  for (const job of victims) {
    await svc.backendFor(job).remove(job);
    removed.push(job.job_id);
  }
  svc.store.deleteTerminal(removed);
  return { removed };
}
