// A listing's window: the newest jobs and job arrays together, each array one entry (its tasks counted in it, not
// listed), as the dashboard and `awaitless list` show them.
import type { ArrayEntry } from "./array-views.ts";
import type { JobServiceApi, JobStatus, ListRequest } from "./service-api.ts";

/** What a page lists: the newest jobs and arrays in one window (tasks left out: each array is one entry). */
export interface Listing {
  jobs: JobStatus[];
  arrays: ArrayEntry[];
  /** Jobs matching in all, plus the arrays listed. */
  total: number;
}

/**
 * The newest `limit` jobs and arrays together (by ID, newest first), array tasks left out: a 1,000-task array is
 * one entry with its own counts, so it pushes no other job out. `q` keeps entries whose ID, name or command has it.
 */
export async function listing(
  service: JobServiceApi,
  req: ListRequest & { limit: number },
  q?: string,
): Promise<Listing> {
  const limit = req.limit;
  const page = await service.listPage({
    ...req,
    limit,
    ...(service.arrays ? { without_array_tasks: true } : {}),
  });
  const arrays = service.arrays
    ? service.arrays.list({
        ...(req.state !== undefined ? { state: req.state } : {}),
        ...(req.name !== undefined ? { name: req.name } : {}),
        ...(req.host !== undefined ? { host: req.host } : {}),
        ...(req.queue !== undefined ? { queue: req.queue } : {}),
        limit,
      })
    : [];
  const has = (e: { job_id: string; name: string | null; argv: string[] }) =>
    !q || [e.job_id, e.name ?? "", e.argv.join(" ")].some((s) => s.toLowerCase().includes(q));
  const window = [
    ...page.jobs
      .filter(has)
      .map((j) => ({ id: j.job_id, job: j as JobStatus | undefined, array: undefined })),
    ...arrays.filter(has).map((a) => ({ id: a.job_id, job: undefined, array: a as ArrayEntry | undefined })),
  ]
    .sort((a, b) => b.id.localeCompare(a.id))
    .slice(0, limit);
  const jobs = window.flatMap((e) => (e.job ? [e.job] : []));
  const shownArrays = window.flatMap((e) => (e.array ? [e.array] : []));
  const total = q ? window.length : page.total + arrays.length;
  return { jobs, arrays: shownArrays, total };
}
