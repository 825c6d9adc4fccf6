// The live feed behind every open page: one loop per server, listing jobs and waiting on their event-driven watches.
import { isTerminal } from "../core/job.ts";
import type { JobServiceApi, JobStatus } from "../core/service-types.ts";
import { annotate } from "./api.ts";

/** How many jobs a page shows and the feed follows. */
export const FEED_LIMIT = 500;
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

export class LiveFeed {
  private readonly listeners = new Set<Listener>();
  private readonly seen = new Map<string, string>();
  private ctl: AbortController | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly service: JobServiceApi,
    private readonly rescanMs = RESCAN_MS,
  ) {}

  /** Adds a page; its first event is the current listing (`snapshot`), then `job` for each change. */
  async subscribe(listener: Listener): Promise<() => void> {
    const { jobs } = await this.listing();
    listener("snapshot", { jobs });
    // What the page has seen: the loop's next listing sends each job that changed since.
    for (const j of jobs) if (!this.seen.has(j.job_id)) this.seen.set(j.job_id, signature(j));
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

  /** The newest jobs, array tasks marked with their `array_task` (the pages fold them into one row per array). */
  private async listing(): Promise<{ jobs: JobStatus[] }> {
    const { jobs } = await this.service.listPage({ limit: FEED_LIMIT });
    return { jobs: annotate(this.service, jobs) };
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
        const { jobs } = await this.listing();
        for (const j of jobs) {
          const sig = signature(j);
          if (this.seen.get(j.job_id) !== sig) {
            this.seen.set(j.job_id, sig);
            this.emit("job", j);
          }
        }
        active = jobs.filter((j) => !isTerminal(j.state)).map((j) => j.job_id);
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
