// Named queues as use cases: the admission a launch needs, and the `queue list` view (target truth + history).

import type { Backend, LaunchAdmission } from "../backend/backend.ts";
import { AwaitlessError, hint } from "../model/errors.ts";
import type { JobSpec } from "../model/job.ts";
import { arrayOfQueue } from "../model/queue-names.ts";
import type { QueueListing, QueueView } from "../model/service-api.ts";
import type { JobStore } from "../store/job-store.ts";
import { targetOf } from "../store/queue-table.ts";
import { refuseForeignArrayQueue } from "./array-queues.ts";

/** What the wrapper must wait for before starting this job; undefined when it starts at once. */
export function admissionFor(store: JobStore, spec: JobSpec, backend: Backend): LaunchAdmission | undefined {
  const resources = spec.resources ?? [];
  if (spec.queue === null && resources.length === 0) return undefined;
  refuseForeignArrayQueue(spec);
  if (!backend.capabilities.namedQueues) {
    throw new AwaitlessError(
      "invalid_argument",
      `the ${spec.backend} backend cannot hold jobs in named queues or resource locks yet`,
      hint("queue_unsupported"),
    );
  }
  const concurrency =
    spec.queue === null ? 1 : store.queues.require(spec.queue, targetOf(spec.host)).concurrency;
  return { queue: spec.queue, concurrency, resources };
}

export interface QueueListDeps {
  store: JobStore;
  backends: Partial<Record<JobSpec["backend"], Backend>>;
  /** Reconciles a job (so finished ones leave the counts). */
  refresh(jobId: string): Promise<unknown>;
}

/**
 * Every queue (of one target when `host` is given): concurrency from the database, running and waiting jobs from
 * the target's queue directory when its backend can read it (else from the database), ETA from past runtimes.
 * Ended arrays' queues are removed first; active arrays' private queues are counted, and listed only with `arrays`.
 */
export async function listQueues(
  deps: QueueListDeps,
  host?: string,
  opts: { arrays?: boolean } = {},
): Promise<QueueListing> {
  for (const id of deps.store.activeJobIds()) await deps.refresh(id).catch(() => undefined);
  deps.store.queues.removeEndedArrayQueues();
  const all = deps.store.queues.list(host === undefined ? undefined : targetOf(host));
  const rows = opts.arrays ? all : all.filter((r) => arrayOfQueue(r.name) === undefined);
  const snapshots = new Map<string, Awaited<ReturnType<NonNullable<Backend["queueSnapshot"]>>> | null>();
  const views: QueueView[] = [];
  for (const row of rows) {
    const hostName = row.target === "local" ? null : row.target;
    if (!snapshots.has(row.target)) snapshots.set(row.target, await snapshotOf(deps, hostName));
    const snap = snapshots.get(row.target) ?? null;
    let running: string[];
    let waiting: string[];
    if (snap) {
      running = snap.running.filter((r) => r.queue === row.name).map((r) => r.job_id);
      waiting = snap.waiting.filter((w) => w.queue === row.name).map((w) => w.job_id);
    } else {
      const jobs = deps.store.list({
        queue: row.name,
        states: ["queued", "starting", "running", "stalled"],
        limit: 10_000,
      });
      const here = jobs.filter((j) => targetOf(j.host) === row.target).reverse();
      running = here.filter((j) => j.state === "running" || j.state === "stalled").map((j) => j.job_id);
      waiting = here.filter((j) => j.state === "queued" || j.state === "starting").map((j) => j.job_id);
    }
    const mean = deps.store.queues.meanRuntimeSeconds(row.name, hostName);
    const rounds = Math.ceil(waiting.length / row.concurrency);
    const arrayId = arrayOfQueue(row.name);
    views.push({
      name: row.name,
      ...(arrayId === undefined ? {} : { array_id: arrayId }),
      target: row.target,
      concurrency: row.concurrency,
      running: running.length,
      queued: waiting.length,
      running_job_ids: running,
      waiting: waiting.map((job_id, i) => ({ job_id, position: i + 1 })),
      mean_runtime_seconds: mean,
      eta_seconds: mean === null || waiting.length === 0 ? null : Math.round(rounds * mean),
      created_at: row.created_at,
    });
  }
  return { queues: views, hidden_array_queues: all.length - rows.length };
}

async function snapshotOf(deps: QueueListDeps, host: string | null) {
  const backend = host === null ? deps.backends.local : deps.backends.ssh;
  if (!backend?.capabilities.namedQueues || !backend.queueSnapshot) return null;
  try {
    return await backend.queueSnapshot(host);
  } catch {
    return null;
  }
}
