// Claude Code channel events: a job of this session that ends while nothing waits on it wakes the session.
import { isTerminal, type JobState } from "../core/model/job.ts";
import { isDelivered, type JobServiceApi } from "../core/model/service-api.ts";
import { formatSeconds } from "./results.ts";

/** The server capability Claude Code looks for, and the notification it turns into a `<channel>` prompt. */
export const CHANNEL_CAPABILITY = "claude/channel";
export const CHANNEL_METHOD = "notifications/claude/channel";

/** Endings are gathered until none came for this long… */
export const CHANNEL_QUIET_MS = 2_000;
/** …or at most this long after the first one… */
export const CHANNEL_GATHER_MS = 10_000;
/** …and two events are at least this far apart (a steady trickle of endings makes at most 12 events a minute). */
export const CHANNEL_SPACING_MS = 5_000;
/** Jobs a summary event names one by one (the rest are counted). */
export const CHANNEL_LISTED = 10;

export interface ChannelEvent {
  content: string;
  /** Each key becomes an attribute of the `<channel>` tag: identifiers, string values (Claude Code drops others). */
  meta: Record<string, string>;
}

export interface ChannelDeps {
  service: JobServiceApi;
  /** Whether the client reads channel events (asked at the first ending, when the client is known). */
  listening: () => boolean;
  /** Whether the job's end is still news to the session (not delivered, not being waited on, not announced). */
  unheard: (jobId: string) => boolean;
  /** The job's display name (its name, else its command). */
  nameOf: (jobId: string) => Promise<string | undefined>;
  send: (event: ChannelEvent) => Promise<void>;
}

interface Ended {
  job_id: string;
  name: string;
  state: JobState;
  exit_code: number | null;
}

/**
 * One per 2025-era connection. Gathers the session's unheard endings and sends one event per gathering: one job's
 * end in words, or a summary of many (a burst of 100 endings is one event). Nothing runs until a job ends, and
 * nothing at all for a client that does not listen.
 */
export class SessionChannel {
  private readonly pending = new Set<string>();
  private readonly sent = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private firstAt = 0;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private listens: boolean | undefined;
  private closed = false;

  constructor(private readonly deps: ChannelDeps) {}

  /** A job of this session ended while nothing waited on it. */
  ended(jobId: string): void {
    if (this.closed || this.sent.has(jobId)) return;
    this.listens ??= this.deps.listening();
    if (!this.listens) return;
    if (this.pending.size === 0) this.firstAt = Date.now();
    this.pending.add(jobId);
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    const now = Date.now();
    const at = Math.max(
      Math.min(now + CHANNEL_QUIET_MS, this.firstAt + CHANNEL_GATHER_MS),
      this.lastSentAt + CHANNEL_SPACING_MS,
    );
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(() => {});
    }, at - now);
    this.timer.unref?.();
  }

  private async flush(): Promise<void> {
    const ids = [...this.pending].filter((id) => this.deps.unheard(id));
    this.pending.clear();
    if (ids.length === 0 || this.closed) return;
    for (const id of ids) this.sent.add(id);
    this.lastSentAt = Date.now();
    const event = ids.length === 1 ? await this.oneJob(ids[0]!) : await this.summary(ids);
    if (event !== undefined && !this.closed) await this.deps.send(event);
  }

  private async oneJob(jobId: string): Promise<ChannelEvent | undefined> {
    const done = await this.deps.service
      .wait(jobId, { timeoutMs: 0, untracked: true })
      .catch(() => undefined);
    if (done === undefined || !isDelivered(done)) return undefined;
    const name = (await this.deps.nameOf(jobId)) ?? done.name ?? "";
    const how =
      done.state === "succeeded"
        ? "succeeded"
        : done.exit_code !== null
          ? `${done.state.replace("_", " ")} with exit code ${done.exit_code}`
          : `ended ${done.state}`;
    const took = done.duration_seconds === null ? "" : ` after ${formatSeconds(done.duration_seconds)}`;
    const digest = done.digest[0] ? `: ${done.digest[0]}` : "";
    const call = `wait_for_job with {"job_id":"${jobId}"}`;
    return {
      content: `Job ${jobId}${name ? ` (${name})` : ""} ${how}${took}${digest}. Call ${call} for its result.`,
      meta: {
        event: "job_ended",
        job_id: jobId,
        state: done.state,
        ...(done.exit_code !== null && { exit_code: String(done.exit_code) }),
      },
    };
  }

  private async summary(ids: string[]): Promise<ChannelEvent> {
    const ended: Ended[] = [];
    for (const id of ids) {
      const status = await this.deps.service.status(id).catch(() => undefined);
      if (status === undefined || !isTerminal(status.state)) continue;
      const name = (await this.deps.nameOf(id)) ?? "";
      ended.push({ job_id: id, name, state: status.state, exit_code: status.exit_code });
    }
    const counts = new Map<string, number>();
    for (const e of ended) counts.set(e.state, (counts.get(e.state) ?? 0) + 1);
    // the states that did not succeed first, as the list below
    const tally = [...counts]
      .sort(([a], [b]) => Number(a === "succeeded") - Number(b === "succeeded") || a.localeCompare(b))
      .map(([state, n]) => `${n} ${state}`)
      .join(", ");
    // the ones that did not succeed first: those are the ones to read
    const listed = [
      ...ended.filter((e) => e.state !== "succeeded"),
      ...ended.filter((e) => e.state === "succeeded"),
    ]
      .slice(0, CHANNEL_LISTED)
      .map(
        (e) =>
          `- ${e.job_id}${e.name ? ` (${e.name})` : ""} ${e.state}${e.exit_code !== null ? `, exit code ${e.exit_code}` : ""}`,
      );
    const more = ended.length > CHANNEL_LISTED ? `\n…and ${ended.length - CHANNEL_LISTED} more.` : "";
    const call =
      ended.length <= CHANNEL_LISTED
        ? `wait_for_completions with {"job_ids":${JSON.stringify(ended.map((e) => e.job_id))}}`
        : `list_jobs with {"state":"terminal","limit":${Math.min(1000, ended.length)}} to see them all, and wait_for_job with a job_id`;
    return {
      content: `${ended.length} jobs of this session ended: ${tally}.\n${listed.join("\n")}${more}\nCall ${call} for their results.`,
      meta: { event: "jobs_ended", count: String(ended.length) },
    };
  }
}
