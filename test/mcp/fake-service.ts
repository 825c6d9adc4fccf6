// An in-process JobServiceApi for fast MCP tests: jobs whose end the test controls (or a timer, via "fake:exit").
import { EventEmitter } from "node:events";
import path from "node:path";
import { AwaitlessError } from "../../src/core/errors.ts";
import { isTerminal, type JobResult, type JobState, type TerminalState } from "../../src/core/job.ts";
import type {
  CancelResponse,
  CompletionItem,
  CompletionsResponse,
  InspectResponse,
  JobServiceApi,
  JobStatus,
  LaunchRequest,
  ListRequest,
  LogsRequest,
  LogsResponse,
  RunResponse,
  SubmitResponse,
  WaitOptions,
  WaitResponse,
} from "../../src/core/service-types.ts";
import { fakeResult } from "./fake-result.ts";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const newJobId = () =>
  `job_${Array.from({ length: 26 }, () => CROCKFORD[Math.floor(Math.random() * 32)]).join("")}`;

interface FakeJob {
  status: JobStatus;
  stdout: string;
  stderr: string;
  fingerprint: string;
  result?: JobResult;
  waitedMs: number;
}

/** argv ["fake:exit", CODE, MS] ends by itself after MS with exit CODE; anything else runs until finish()/cancel(). */
export class FakeJobService implements JobServiceApi {
  readonly jobs = new Map<string, FakeJob>();
  private readonly events = new EventEmitter();
  private readonly completionLog: CompletionItem[] = [];
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  calls: string[] = [];

  async submit(req: LaunchRequest): Promise<SubmitResponse> {
    this.calls.push("submit");
    const fingerprint = JSON.stringify({ ...req, client_request_id: undefined, allow_duplicate: undefined });
    if (req.client_request_id !== undefined) {
      const twin = [...this.jobs.values()].find((j) => j.status.client_request_id === req.client_request_id);
      if (twin !== undefined) {
        if (twin.fingerprint !== fingerprint) {
          throw new AwaitlessError(
            "idempotency_conflict",
            `client_request_id ${req.client_request_id} already names job ${twin.status.job_id} with other arguments`,
            "Use a new client_request_id for a different command.",
            { job_id: twin.status.job_id },
          );
        }
        return {
          job_id: twin.status.job_id,
          state: twin.status.state,
          backend: twin.status.backend,
          idempotent_replay: true,
          job: { ...twin.status },
        };
      }
    }
    const cwd = path.resolve(req.cwd ?? process.cwd());
    const twin = [...this.jobs.values()].find(
      (j) =>
        !isTerminal(j.status.state) &&
        j.status.cwd === cwd &&
        j.status.argv.join("\0") === req.argv.join("\0"),
    );
    if (twin !== undefined && !req.allow_duplicate) {
      // Same shape as the real service: one hint per surface; the MCP one names the tool.
      throw new AwaitlessError(
        "duplicate_active_job",
        `the same command is already running in the same directory as job ${twin.status.job_id}`,
        {
          cli: `wait for it (awaitless wait ${twin.status.job_id}) instead of starting it twice`,
          mcp: `Call wait_for_job with {"job_id":"${twin.status.job_id}"} to get its result instead of starting it twice.`,
        },
        { job_id: twin.status.job_id },
      );
    }
    const now = new Date().toISOString();
    const job: FakeJob = {
      fingerprint,
      stdout: "",
      stderr: "",
      waitedMs: 0,
      status: {
        job_id: newJobId(),
        name: req.name ?? null,
        backend: req.backend ?? "local",
        host: req.host ?? null,
        queue: req.queue ?? null,
        state: "running",
        status_message: null,
        argv: req.argv,
        cwd,
        created_at: now,
        started_at: now,
        finished_at: null,
        elapsed_seconds: 0,
        exit_code: null,
        signal: null,
        reason: null,
        stdout_bytes: 0,
        stderr_bytes: 0,
        last_output_at: null,
        client_request_id: req.client_request_id ?? null,
        backend_id: null,
      },
    };
    this.jobs.set(job.status.job_id, job);
    if (req.argv[0] === "fake:exit") {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.finish(job.status.job_id, Number(req.argv[1] ?? 0));
        },
        Number(req.argv[2] ?? 0),
      );
      this.timers.add(timer);
    }
    return {
      job_id: job.status.job_id,
      state: "running",
      backend: job.status.backend,
      idempotent_replay: false,
      job: { ...job.status },
    };
  }

  /** Appends output to a running job. */
  write(jobId: string, text: string, stream: "stdout" | "stderr" = "stdout"): void {
    const job = this.get(jobId);
    job[stream] += text;
    job.status[stream === "stdout" ? "stdout_bytes" : "stderr_bytes"] += Buffer.byteLength(text);
    job.status.last_output_at = new Date().toISOString();
  }

  /** Ends a job (exit code → succeeded/failed) unless it already ended. */
  finish(jobId: string, exitCode: number, state?: TerminalState): void {
    const job = this.get(jobId);
    if (isTerminal(job.status.state)) return;
    const finishedAt = new Date().toISOString();
    const final: TerminalState = state ?? (exitCode === 0 ? "succeeded" : "failed");
    Object.assign(job.status, { state: final, finished_at: finishedAt, exit_code: state ? null : exitCode });
    job.result = fakeResult(job.status, final, exitCode, job.stdout, job.stderr);
    this.completionLog.push({
      completion_id: `cmp_${String(this.completionLog.length + 1).padStart(16, "0")}`,
      job_id: jobId,
      state: final,
      finished_at: finishedAt,
      observed_at: finishedAt,
      result: job.result,
    });
    this.events.emit(jobId, final);
    this.events.emit("any");
  }

  async run(
    req: LaunchRequest,
    inlineTimeoutMs: number,
    opts: Omit<WaitOptions, "timeoutMs"> = {},
  ): Promise<RunResponse> {
    const submitted = await this.submit(req);
    const waited = await this.wait(submitted.job_id, { ...opts, timeoutMs: inlineTimeoutMs });
    const inline = waited.wait_state === "complete";
    return {
      ...waited,
      delivery: inline ? "inline" : "detached",
      ...(inline ? {} : { detach_reason: "inline_timeout" as const }),
      idempotent_replay: submitted.idempotent_replay,
    };
  }

  async wait(jobId: string, opts: WaitOptions): Promise<WaitResponse> {
    this.calls.push("wait");
    const job = this.get(jobId);
    const start = Date.now();
    if (!isTerminal(job.status.state) && opts.timeoutMs !== 0) {
      await this.until(() => isTerminal(job.status.state), opts.timeoutMs, opts.signal, jobId);
      if (!opts.untracked) job.waitedMs += Date.now() - start;
    }
    const waited_seconds = job.waitedMs / 1000;
    if (job.result !== undefined) {
      return {
        ...job.result,
        job_state: job.result.state,
        wait_state: "complete",
        delivery_state: "delivered",
        waited_seconds,
      };
    }
    const s = job.status;
    return {
      job_id: jobId,
      name: s.name,
      backend: s.backend,
      host: s.host,
      state: s.state,
      created_at: s.created_at,
      started_at: s.started_at,
      stdout_tail: job.stdout,
      stderr_tail: job.stderr,
      job_state: s.state,
      wait_state: "client_timeout",
      delivery_state: "pending",
      waited_seconds,
      next_action: "cli words",
      next_command: `awaitless wait ${jobId}`,
    };
  }

  async completions(
    jobIds: string[],
    opts: { after_cursor?: string; limit?: number } & WaitOptions,
  ): Promise<CompletionsResponse> {
    const after = opts.after_cursor === undefined ? 0 : Number(opts.after_cursor.slice(4));
    const pick = () => this.completionLog.filter((c, i) => i + 1 > after && jobIds.includes(c.job_id));
    if (pick().length === 0 && opts.timeoutMs !== 0) {
      await this.until(() => pick().length > 0, opts.timeoutMs, opts.signal, "any");
    }
    const items = pick().slice(0, opts.limit ?? 50);
    const last = items.at(-1);
    const cursor = last === undefined ? (opts.after_cursor ?? "cmp_0000000000000000") : last.completion_id;
    return {
      completions: items,
      next_cursor: cursor,
      active_job_ids: jobIds.filter((id) => this.jobs.has(id) && !isTerminal(this.get(id).status.state)),
      unreachable_job_ids: [],
      has_more: pick().length > items.length,
      wait_timed_out: items.length === 0,
    };
  }

  async status(jobId: string): Promise<JobStatus> {
    const job = this.get(jobId);
    const end = job.status.finished_at === null ? Date.now() : Date.parse(job.status.finished_at);
    return { ...job.status, elapsed_seconds: (end - Date.parse(job.status.created_at)) / 1000 };
  }

  async logs(req: LogsRequest): Promise<LogsResponse> {
    const job = this.get(req.job_id);
    const stream = req.stream ?? "both";
    const out: LogsResponse = {
      job_id: req.job_id,
      job_state: job.status.state,
      stdout_bytes: job.status.stdout_bytes,
      stderr_bytes: job.status.stderr_bytes,
      dropped_bytes: { stdout: 0, stderr: 0 },
      truncated: false,
    };
    const page = (text: string) => {
      const lines = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
      return {
        lines,
        first_line: lines ? 1 : null,
        last_line: lines || null,
        lines_total: lines,
        left_out: "",
      };
    };
    if (stream !== "stderr") {
      out.stdout = job.stdout;
      out.stdout_page = page(job.stdout);
    }
    if (stream !== "stdout") {
      out.stderr = job.stderr;
      out.stderr_page = page(job.stderr);
    }
    return out;
  }

  async cancel(jobId: string): Promise<CancelResponse> {
    const job = this.get(jobId);
    if (isTerminal(job.status.state)) {
      return { job_id: jobId, job_state: job.status.state, cancel_requested: false, already_terminal: true };
    }
    this.finish(jobId, 143, "cancelled");
    return { job_id: jobId, job_state: "cancelled", cancel_requested: true, already_terminal: false };
  }

  async list(req: ListRequest): Promise<JobStatus[]> {
    const matches = (state: JobState) =>
      req.state === undefined ||
      req.state === state ||
      (req.state === "active" && !isTerminal(state)) ||
      (req.state === "terminal" && isTerminal(state));
    const all = await Promise.all([...this.jobs.keys()].map((id) => this.status(id)));
    return all
      .filter((j) => matches(j.state) && (req.name === undefined || j.name === req.name))
      .slice(0, req.limit ?? 100);
  }

  async inspect(jobId: string): Promise<InspectResponse> {
    const job = this.get(jobId);
    return {
      job: await this.status(jobId),
      spec: {},
      history: [],
      job_dir: "/nonexistent",
      ...(job.result && { result: job.result }),
    };
  }

  async onTerminal(jobId: string, signal: AbortSignal): Promise<JobState> {
    const job = this.get(jobId);
    if (!isTerminal(job.status.state))
      await this.until(() => isTerminal(job.status.state), null, signal, jobId);
    return job.status.state;
  }

  /** Stops every self-ending job timer (afterAll). */
  storeNotices(): string[] {
    return [];
  }

  async listPage(req: ListRequest): Promise<{ jobs: JobStatus[]; total: number }> {
    const jobs = await this.list(req);
    return { jobs, total: jobs.length };
  }

  // What the CLI alone asks of the service: the MCP server never calls these, so the fake refuses them.
  createQueue(): Promise<never> {
    return Promise.reject(new Error("the fake service has no queues"));
  }
  listQueues(): Promise<never> {
    return Promise.reject(new Error("the fake service has no queues"));
  }
  lastJobId(): never {
    throw new Error("lastJobId is a CLI use case: not in the fake");
  }
  resolveJobId(text: string): string {
    return text;
  }
  resultJson(jobId: string): string | null {
    const result = this.get(jobId).result;
    return result ? JSON.stringify(result) : null;
  }
  followLogs(): never {
    throw new Error("followLogs is a CLI use case: not in the fake");
  }
  gc(): Promise<never> {
    return Promise.reject(new Error("gc is a CLI use case: not in the fake"));
  }

  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private get(jobId: string): FakeJob {
    const job = this.jobs.get(jobId);
    if (job === undefined) {
      const hint = { cli: "Run `awaitless list` to see jobs.", mcp: "Call list_jobs to see jobs." };
      throw new AwaitlessError("not_found", `No job ${jobId}.`, hint, { job_id: jobId });
    }
    return job;
  }

  private until(
    done: () => boolean,
    timeoutMs: number | null,
    signal: AbortSignal | undefined,
    event: string,
  ): Promise<void> {
    return new Promise((resolve) => {
      const finish = () => {
        this.events.off(event, check);
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", finish);
        resolve();
      };
      const check = () => {
        if (done()) finish();
      };
      const timer = timeoutMs === null ? undefined : setTimeout(finish, timeoutMs);
      this.events.on(event, check);
      signal?.addEventListener("abort", finish, { once: true });
      check();
    });
  }
}
