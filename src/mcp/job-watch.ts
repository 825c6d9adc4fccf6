// Watches the jobs this server handed out or was asked about, and announces terminal transitions as resource updates.
import { isTerminal } from "../core/model/job.ts";
import type { JobServiceApi } from "../core/model/service-api.ts";
import { JOB_URI_PREFIX, jobUri } from "./results.ts";

/** Most 2025 `resources/subscribe` subscriptions one session holds at once. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1000;

export function jobIdFromUri(uri: string): string | undefined {
  if (!uri.startsWith(JOB_URI_PREFIX)) return undefined;
  const id = decodeURIComponent(uri.slice(JOB_URI_PREFIX.length));
  return id === "" || id.includes("/") ? undefined : id;
}

/**
 * One per server instance. `notify` sends `notifications/resources/updated`. With `onlySubscribed`
 * (2025 era) only URIs subscribed through resources/subscribe are announced; on the 2026 era the
 * SDK's listen router filters by subscription itself, so everything watched is announced.
 */
export class JobWatch {
  private readonly watchers = new Map<string, AbortController>();
  private readonly subscribed = new Set<string>();
  private readonly endListeners: Array<(jobId: string) => void> = [];
  private closed = false;

  constructor(
    private readonly service: JobServiceApi,
    private readonly notify: (uri: string) => void,
    private readonly onlySubscribed: boolean,
  ) {}

  /** Starts an event-driven watch on the job (idempotent). */
  watch(jobId: string): void {
    if (this.closed || this.watchers.has(jobId)) return;
    const controller = new AbortController();
    this.watchers.set(jobId, controller);
    this.service
      .onTerminal(jobId, controller.signal)
      .then(() => {
        if (controller.signal.aborted) return;
        this.announce(jobId);
      })
      .catch(() => {})
      .finally(() => {
        if (this.watchers.get(jobId) === controller) this.watchers.delete(jobId);
      });
  }

  /** Whether `uri` is subscribed already or one more subscription fits under the per-session cap. */
  canSubscribe(uri: string): boolean {
    return this.subscribed.has(uri) || this.subscribed.size < MAX_SUBSCRIPTIONS_PER_SESSION;
  }

  /**
   * A 2025 `resources/subscribe`: check the job (throws for a malformed or unknown one, remembering nothing),
   * answer at once for a finished job or watch it, then remember it. Returns false, remembering nothing, at the cap.
   */
  async subscribe(uri: string): Promise<boolean> {
    if (!this.canSubscribe(uri)) return false;
    await this.follow(uri);
    // Before the announcement a finished job gets (queued by follow for after this turn).
    if (!this.canSubscribe(uri)) return false;
    this.subscribed.add(uri);
    return true;
  }

  /** How many URIs this session has subscribed to. */
  get subscriptionCount(): number {
    return this.subscribed.size;
  }

  /** Called for every watched job that ends (2025 task status notifications), whatever was subscribed. */
  onEnded(listener: (jobId: string) => void): void {
    this.endListeners.push(listener);
  }

  unsubscribe(uri: string): void {
    this.subscribed.delete(uri);
  }

  /** URIs a client subscribed to (2025 subscribe or 2026 subscriptions/listen): announce finished jobs now. */
  async follow(uri: string): Promise<void> {
    const jobId = jobIdFromUri(uri);
    if (jobId === undefined) return;
    const status = await this.service.status(jobId);
    if (isTerminal(status.state)) {
      // After the acknowledgement has gone out, so the client has the subscription when the update arrives.
      setTimeout(() => this.announce(jobId), 0);
    } else {
      this.watch(jobId);
    }
  }

  close(): void {
    this.closed = true;
    for (const controller of this.watchers.values()) controller.abort();
    this.watchers.clear();
  }

  private announce(jobId: string): void {
    if (this.closed) return;
    for (const listener of this.endListeners) listener(jobId);
    const uri = jobUri(jobId);
    if (this.onlySubscribed && !this.subscribed.has(uri)) return;
    this.notify(uri);
  }
}
