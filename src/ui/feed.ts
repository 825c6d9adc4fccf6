// The live feed behind every open page: one loop per server, listing jobs and waiting on their event-driven watches.

import type { ArrayEntry } from "../core/model/array-views.ts";
import { isTerminal } from "../core/model/job.ts";
import type { JobServiceApi, JobStatus } from "../core/model/service-api.ts";
import { DEFAULT_LIMIT, type Listing, listing } from "./api.ts";

/** How many jobs and arrays (each one entry, its tasks left out) a page shows and the feed follows. */
export const FEED_LIMIT = DEFAULT_LIMIT;
/** Longest wait between two listings: how soon a job submitted elsewhere appears (changes of listed jobs wake at once). */
export const RESCAN_MS = 2000;

type Listener = (event: string, data: unknown) => void;

function signature(j: JobStatus): string {
  return [
    j.state,
    j.status_message,
    j.finished_at,
    j.started_at,
    j.attempt ?? 1,
    j.host_unreachable ?? "",
  ].join("\u0000");
}

function arraySignature(a: ArrayEntry): string {
  return `array\u0000${a.state}\u0000${JSON.stringify(a.counts)}\u0000${a.failed_indices.join(",")}`;
}

export class LiveFeed {
  private readonly listeners = new Set<Listener>();
  private readonly seen = new Map<string, string>();
  private ctl: AbortController | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly service: JobServiceApi,
    private readonly rescanMs = RESCAN_MS,
  ) {}

  /**
   * Adds a page; its first event is the current listing (`snapshot`: jobs and arrays), then `job` for each job that
   * changed, `array` for each array whose counts changed (one of its tasks started or ended), and `forget` for an
   * entry no longer listed.
   */
  async subscribe(listener: Listener): Promise<() => void> {
    const { jobs, arrays } = await this.listing();
    listener("snapshot", { jobs, arrays });
    // What the page has seen: the loop's next listing sends each job and array that changed since.
    for (const j of jobs) if (!this.seen.has(j.job_id)) this.seen.set(j.job_id, signature(j));
    for (const a of arrays) if (!this.seen.has(a.job_id)) this.seen.set(a.job_id, arraySignature(a));
    this.listeners.add(listener);
    if (!this.loop) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  get pages(): number {
    return this.listeners.size;
  }

  /** The newest jobs and arrays (api.ts `listing`): an array's tasks are counted in its entry, not listed. */
  private listing(): Promise<Listing> {
    return listing(this.service, { limit: FEED_LIMIT });
  }

  private start(): void {
    const ctl = new AbortController();
    this.ctl = ctl;
    this.loop = this.run(ctl.signal).catch(() => {});
  }

  stop(): void {
    this.ctl?.abort();
    this.ctl = null;
    this.loop = null;
    this.seen.clear();
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let active: string[] = [];
      try {
        const { jobs, arrays } = await this.listing();
        for (const j of jobs) {
          const sig = signature(j);
          if (this.seen.get(j.job_id) !== sig) {
            this.seen.set(j.job_id, sig);
            this.emit("job", j);
          }
        }
        for (const a of arrays) {
          const sig = arraySignature(a);
          if (this.seen.get(a.job_id) !== sig) {
            this.seen.set(a.job_id, sig);
            this.emit("array", a);
          }
        }
        // An entry no longer listed is forgotten by the pages: a job that became an array's task (listed as a job
        // between its reservation and its link to the array), one gc removed, one pushed out of the window.
        const listed = new Set([...jobs.map((j) => j.job_id), ...arrays.map((a) => a.job_id)]);
        for (const id of [...this.seen.keys()]) {
          if (listed.has(id)) continue;
          this.seen.delete(id);
          this.emit("forget", { job_id: id });
        }
        // an active array's tasks are waited on too: each task's start or end wakes the loop at once
        const activeArrays = arrays.filter((a) => !isTerminal(a.state)).map((a) => a.job_id);
        active = [
          ...jobs.filter((j) => !isTerminal(j.state)).map((j) => j.job_id),
          ...(this.service.arrays?.activeTasks(activeArrays) ?? []),
        ];
      } catch (e) {
        this.emit("feed_error", { message: String((e as Error)?.message ?? e) });
      }
      if (signal.aborted) break;
      if (active.length > 0) await this.service.waitForAnyChange(active, this.rescanMs, signal);
      else await sleep(this.rescanMs, signal);
    }
  }

  private emit(event: string, data: unknown): void {
    for (const l of this.listeners) l(event, data);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
