import { dirname } from "node:path";
import { invalid } from "../model/errors.ts";
import { isTerminal, type JobResult } from "../model/job.ts";
import { listStates } from "../model/list-states.ts";
import type {
  AttemptView,
  GcOptions,
  GcQuota,
  GcRemoved,
  GcResult,
  InspectResponse,
  JobStatus,
  ListRequest,
} from "../model/service-api.ts";
import { firstAttemptDir } from "../retries/retry-policy.ts";
import type { StoredJob } from "../store/job-store.ts";
import { directoryBytes } from "../util/directory-bytes.ts";
import { JobDirRefused, jobDirScope, removeJobDir } from "../util/job-dir-guard.ts";
import type { ServiceCore } from "./service-context.ts";

export async function listJobs(svc: ServiceCore, req: ListRequest): Promise<JobStatus[]> {
  return (await listJobsPage(svc, req)).jobs;
}

/** The listing and how many jobs match the filter in all (`20 of 30 shown`). */
export async function listJobsPage(
  svc: ServiceCore,
  req: ListRequest,
): Promise<{ jobs: JobStatus[]; total: number }> {
  const limit = req.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw invalid(`bad limit ${limit}`, "use 1–10000");
  const states = listStates(req.state);
  // Reconcile the active jobs first so the listing shows fresh states (few are ever active). On a full store a
  // refresh reports what it observed without storing it: those jobs are listed as observed.
  const observed = new Map<string, StoredJob>();
  for (const id of svc.store.activeJobIds()) {
    const job = await svc.refresh(id).catch(() => undefined);
    if (job) observed.set(id, job);
  }
  const filter = {
    ...(req.name !== undefined ? { name: req.name } : {}),
    ...(req.host !== undefined ? { host: req.host } : {}),
    ...(req.queue !== undefined ? { queue: req.queue } : {}),
    ...(req.without_array_tasks ? { withoutArrayTasks: true } : {}),
  };
  const rows = svc.store.list({ ...(states ? { states } : {}), ...filter, limit });
  const listed = new Set(rows.map((j) => j.job_id));
  const unsealed = [...observed.values()].filter(
    (j) =>
      !listed.has(j.job_id) &&
      (filter.name === undefined || j.name === filter.name) &&
      (filter.host === undefined || j.host === filter.host) &&
      (filter.queue === undefined || j.queue === filter.queue) &&
      !(filter.withoutArrayTasks && svc.store.arrays.taskOfJob(j.job_id)),
  );
  const shown = [...rows, ...unsealed]
    .map((j) => observed.get(j.job_id) ?? j)
    .filter((j) => !states || states.includes(j.state))
    .sort((a, b) => b.job_id.localeCompare(a.job_id))
    .slice(0, limit);
  const jobs = await Promise.all(shown.map((j) => svc.toStatus(j)));
  // The count is the store's (an observed-but-unstored state change does not move a job between counts).
  const total =
    rows.length < limit
      ? jobs.length
      : Math.max(jobs.length, svc.store.count({ ...(states ? { states } : {}), ...filter }));
  return { jobs, total };
}

export async function inspectJob(svc: ServiceCore, jobId: string): Promise<InspectResponse> {
  const look = await svc.look(jobId);
  const job = look.job;
  const result = svc.resultOf(job);
  const redactor = await svc.displayRedactor(job);
  const completion = svc.backendFor(job).completionNote?.(job);
  return {
    job: await svc.statusOf(look),
    spec: {
      ...job.spec,
      argv: job.spec.argv.map((a) => redactor.redact(a)),
      env: Object.fromEntries(Object.entries(job.spec.env).map(([k, v]) => [k, redactor.redact(v)])),
      fingerprint: job.fingerprint,
    },
    history: svc.store.history(jobId),
    job_dir: job.job_dir,
    ...dependentsField(svc.store.dependentsOf(jobId)),
    ...(job.spec.retry ? { attempt_history: attemptViews(svc, jobId) } : {}),
    ...(completion !== undefined ? { completion } : {}),
    ...(result ? { result } : {}),
  };
}

/**
 * Removes finished jobs (files, then rows) by age, by count, and then oldest-finished first while the job
 * directories on this machine together exceed `maxBytes` (0 or null: no size limit). Active jobs are never touched.
 */
export async function collectGarbage(svc: ServiceCore, o: GcOptions): Promise<GcResult> {
  // Fresh states first: a job that finished since (or whose result a full disk kept out of the store) can go now.
  for (const id of svc.store.activeJobIds()) await svc.refresh(id).catch(() => undefined);
  const cutoff =
    o.olderThanSeconds === null ? null : new Date(Date.now() - o.olderThanSeconds * 1000).toISOString();
  const victims = svc.store.gc.candidates(cutoff, o.keep);
  const ids = victims.map((j) => j.job_id);
  let quota: GcQuota = {};
  if (o.maxBytes) {
    const chosen = new Set(ids);
    const rest = svc.store.gc.jobDirs().filter((j) => !chosen.has(j.job_id));
    const sized = rest.map((j) => ({ ...j, bytes: directoryBytes(j.job_dir) }));
    let total = sized.reduce((sum, j) => sum + j.bytes, 0);
    const finished = sized
      .filter((j) => isTerminal(j.state))
      .sort(
        (a, b) =>
          (a.finished_at ?? "").localeCompare(b.finished_at ?? "") || a.job_id.localeCompare(b.job_id),
      );
    const extra: string[] = [];
    for (const j of finished) {
      if (total <= o.maxBytes) break;
      extra.push(j.job_id);
      total -= j.bytes;
    }
    for (const id of extra) {
      const job = svc.store.get(id);
      if (job) victims.push(job);
    }
    ids.push(...extra);
    quota = {
      store_bytes: total,
      quota_bytes: o.maxBytes,
      ...(total > o.maxBytes ? { over_quota: true } : {}),
    };
  }
  if (o.dryRun) return { dry_run: true, would_remove: ids, ...quota };
  const removed: string[] = [];
  const kept: NonNullable<GcRemoved["kept"]> = [];
  const forgotten: NonNullable<GcRemoved["forgotten"]> = [];
  const left: NonNullable<GcRemoved["left"]> = [];
  const dataDir = dirname(svc.store.path);
  for (const job of victims) {
    // every path is checked by the one guard before anything is removed: a row naming a directory that is not the
    // job's own (a damaged or hostile row) is forgotten, and nothing of what it names is touched
    const scope = jobDirScope(job, dataDir);
    try {
      await svc.backendFor(job).remove(job, scope);
      // a retried job's earlier attempts, each in its own directory (the first one's holds the later ones)
      for (const a of svc.store.attempts.list(job.job_id).reverse()) {
        await svc
          .backendFor(job)
          .remove({ ...job, job_dir: a.job_dir, backend_id: a.backend_id, attempt: a.attempt }, scope);
      }
    } catch (e) {
      const reason = (e as Error).message;
      if (e instanceof JobDirRefused) {
        left.push({ job_id: job.job_id, reason });
        removed.push(job.job_id);
        continue;
      }
      if (!o.forgetUnreachable) {
        kept.push({ job_id: job.job_id, reason });
        continue;
      }
      try {
        removeJobDir(firstAttemptDir(job), scope);
      } catch (refused) {
        if (!(refused instanceof JobDirRefused)) throw refused;
        left.push({ job_id: job.job_id, reason: refused.message });
        removed.push(job.job_id);
        continue;
      }
      forgotten.push({ job_id: job.job_id, host: job.host, reason });
    }
    removed.push(job.job_id);
  }
  svc.store.gc.deleteTerminal(removed);
  return {
    removed,
    ...quota,
    ...(kept.length > 0 ? { kept } : {}),
    ...(forgotten.length > 0 ? { forgotten } : {}),
    ...(left.length > 0 ? { left } : {}),
  };
}

function dependentsField(rows: { job_id: string; on: string }[]): { dependents?: string[] } {
  return rows.length === 0 ? {} : { dependents: rows.map((r) => `${r.job_id}:${r.on}`) };
}

function attemptViews(svc: ServiceCore, jobId: string): AttemptView[] {
  return svc.store.attempts.list(jobId).map((a) => ({
    attempt: a.attempt,
    state: a.state,
    reason: a.reason,
    exit_code: a.exit_code,
    signal: a.signal,
    launched_at: a.launched_at,
    started_at: a.started_at,
    finished_at: a.finished_at,
    job_dir: a.job_dir,
    result: JSON.parse(a.result_json) as JobResult,
  }));
}
