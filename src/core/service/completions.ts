// The completion feed: terminal events for a set of jobs after an opaque cursor, blocking until one arrives.
import { hint, invalid } from "../model/errors.ts";
import { formatCursor, parseCursor } from "../model/ids.ts";
import { isTerminal, type JobResult } from "../model/job.ts";
import type { CompletionsResponse, WaitOptions } from "../model/service-api.ts";
import type { ServiceCore } from "./service-context.ts";

export async function completions(
  svc: ServiceCore,
  jobIds: string[],
  opts: { after_cursor?: string; limit?: number } & WaitOptions,
): Promise<CompletionsResponse> {
  if (!Array.isArray(jobIds) || jobIds.length < 1 || jobIds.length > 500) {
    throw invalid("completions needs 1–500 job IDs", hint("pass_submitted_ids"));
  }
  const ids = [...new Set(jobIds)];
  for (const id of ids) svc.getJob(id); // unknown IDs are an error, named
  const limit = opts.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw invalid(`bad limit ${limit}`, "use 1–500");
  let after = 0;
  if (opts.after_cursor !== undefined) {
    const seq = parseCursor(opts.after_cursor);
    if (seq === null) {
      throw invalid(
        `bad cursor ${JSON.stringify(opts.after_cursor)}`,
        "pass a next_cursor from an earlier answer (cmp_…), or omit it",
      );
    }
    after = seq;
  }
  const deadline = opts.timeoutMs === null ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  let waited = false;
  for (;;) {
    const jobs = await Promise.all(ids.map((id) => svc.refresh(id)));
    const rows = svc.store.completionsAfter(ids, after, limit + 1);
    const active = jobs.filter((j) => !isTerminal(j.state));
    const now = Date.now();
    if (rows.length > 0 || active.length === 0 || now >= deadline || opts.signal?.aborted) {
      const page = rows.slice(0, limit);
      return {
        completions: page.map((r) => ({
          completion_id: formatCursor(r.seq),
          job_id: r.job_id,
          state: r.state,
          finished_at: r.finished_at,
          observed_at: r.observed_at,
          result: JSON.parse(svc.store.get(r.job_id)?.result_json ?? "null") as JobResult,
        })),
        next_cursor: formatCursor(page.length > 0 ? page[page.length - 1]!.seq : after),
        active_job_ids: active.map((j) => j.job_id),
        unreachable_job_ids: active.filter((j) => svc.unreachableReason(j.job_id)).map((j) => j.job_id),
        has_more: rows.length > limit,
        wait_timed_out: waited && rows.length === 0 && active.length > 0,
      };
    }
    waited = true;
    // Wait for any of the active jobs to change; each backend watch is event-driven.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const slice = Math.max(1, Math.min(svc.settings.pollIntervalMs, deadline - now));
    try {
      await Promise.race(active.map((j) => svc.backendFor(j).waitForChange(j, slice, ctl.signal)));
    } finally {
      ctl.abort();
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }
}
