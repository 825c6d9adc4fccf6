// Per-session completion notices: jobs this session started or waited on that ended since it last heard of them.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { JobState } from "../core/model/job.ts";
import type { JobServiceApi } from "../core/model/service-api.ts";
import type { JobWatch } from "./job-watch.ts";
import { JOB_URI_PREFIX } from "./results.ts";

/** Most finished jobs one tool result announces; the rest follow on the next calls. */
export const MAX_FINISHED_PER_RESULT = 5;

export interface FinishedJob {
  job_id: string;
  name: string;
  state: JobState;
  exit_code: number | null;
  finished_at: string | null;
}

const NAME_CHARS = 60;

/** A job's display name: its name, else its command (a shell string's script, not `sh -c`), cut at NAME_CHARS. */
export function jobDisplayName(job: { name?: string | null; argv: string[] }): string {
  if (job.name) return job.name;
  const argv = job.argv;
  const text = argv.length === 3 && argv[0] === "sh" && argv[1] === "-c" ? argv[2]! : argv.join(" ");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= NAME_CHARS ? line : `${line.slice(0, NAME_CHARS - 1)}…`;
}

/**
 * One per MCP connection. Fed by the session's job watch (the store's completion feed, no scan): a tracked job
 * that ends waits in `ended` until a result announces it or a wait/run answer delivers it; either happens once.
 */
export class SessionFinishedJobs {
  private readonly tracked = new Set<string>();
  private readonly done = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly waiting = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private readonly unheardListeners: Array<(jobId: string) => void> = [];

  constructor(
    private readonly service: JobServiceApi,
    watch: JobWatch,
  ) {
    watch.onEnded((jobId) => {
      if (!this.tracked.has(jobId) || this.done.has(jobId) || this.ended.has(jobId)) return;
      this.ended.add(jobId);
      if (!this.waiting.has(jobId)) for (const listener of this.unheardListeners) listener(jobId);
    });
  }

  /** Called once when a job of this session ends while none of its calls waits on it (Claude Code's channel). */
  onUnheardEnd(listener: (jobId: string) => void): void {
    this.unheardListeners.push(listener);
  }

  /** Whether the job ended and its result has not reached this session, nor will a wait in flight deliver it. */
  isUnheard(jobId: string): boolean {
    return this.ended.has(jobId) && !this.done.has(jobId) && !this.waiting.has(jobId);
  }

  /** A job this session launched or waited on (with its command when known, for its resource link's name). */
  track(jobId: string, job?: { name?: string | null; argv: string[] }): void {
    this.tracked.add(jobId);
    if (job) this.names.set(jobId, jobDisplayName(job));
  }

  /** Remembers a job's name for its links without making it this session's job (a status the call read anyway). */
  remember(jobId: string, job: { name?: string | null; argv: string[] }): void {
    this.names.set(jobId, jobDisplayName(job));
  }

  /** The job's display name: remembered from its launch, else read once from the store. */
  async nameOf(jobId: string): Promise<string | undefined> {
    const known = this.names.get(jobId);
    if (known !== undefined) return known;
    const status = await this.service.status(jobId).catch(() => undefined);
    if (status === undefined) return undefined;
    const name = jobDisplayName(status);
    this.names.set(jobId, name);
    return name;
  }

  /** Names each job resource link of the result after its command (`make test`) instead of its ID. */
  async nameLinks(result: CallToolResult): Promise<void> {
    for (const item of result.content) {
      if (item.type !== "resource_link" || !item.uri.startsWith(JOB_URI_PREFIX)) continue;
      const name = await this.nameOf(item.uri.slice(JOB_URI_PREFIX.length));
      if (name) item.name = name;
    }
  }

  /** Its result reached this session in a wait/run answer: never announce it. */
  delivered(jobId: string): void {
    this.tracked.add(jobId);
    this.done.add(jobId);
    this.ended.delete(jobId);
  }

  /** A wait on the job is in flight: its own answer will carry the result, so other calls keep quiet about it. */
  async holding<T>(jobId: string, run: () => Promise<T>): Promise<T> {
    this.waiting.set(jobId, (this.waiting.get(jobId) ?? 0) + 1);
    try {
      return await run();
    } finally {
      const left = (this.waiting.get(jobId) ?? 1) - 1;
      if (left === 0) this.waiting.delete(jobId);
      else this.waiting.set(jobId, left);
    }
  }

  /** Takes up to MAX_FINISHED_PER_RESULT ended jobs (each once), reading only those jobs. */
  async take(): Promise<FinishedJob[]> {
    const ids = [...this.ended].filter((id) => !this.waiting.has(id)).slice(0, MAX_FINISHED_PER_RESULT);
    const out: FinishedJob[] = [];
    for (const id of ids) {
      this.ended.delete(id);
      this.done.add(id);
      const status = await this.service.status(id).catch(() => undefined);
      if (status === undefined) continue;
      this.names.set(id, jobDisplayName(status));
      out.push({
        job_id: id,
        name: jobDisplayName(status),
        state: status.state,
        exit_code: status.exit_code,
        finished_at: status.finished_at,
      });
    }
    return out;
  }

  /** Adds `finished_jobs` and the one "Meanwhile finished" line to a tool result. */
  async annotate(result: CallToolResult): Promise<CallToolResult> {
    if (this.ended.size === 0) return result;
    const finished = await this.take();
    if (finished.length === 0) return result;
    result.structuredContent = { ...(result.structuredContent ?? {}), finished_jobs: finished };
    const line = finishedLine(finished);
    const text = result.content.find((c) => c.type === "text");
    if (text && text.type === "text") text.text = `${text.text}\n${line}`;
    else result.content.unshift({ type: "text", text: line });
    return result;
  }
}

export function finishedLine(finished: FinishedJob[]): string {
  const parts = finished.map((f) => {
    const how =
      f.state === "succeeded"
        ? "succeeded"
        : f.exit_code !== null
          ? `${f.state}, exit ${f.exit_code}`
          : f.state;
    return `${f.job_id} (${f.name}) ${how}`;
  });
  const their = finished.length === 1 ? "its result" : "their results";
  return `Meanwhile finished: ${parts.join("; ")} — wait_for_job for ${their}.`;
}
