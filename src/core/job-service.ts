// The use cases shared by CLI and MCP: submit, run, wait, status, logs, cancel, list, inspect.
// Every read reconciles what it needs first (no daemon): observe the wrapper, apply the rules in reconcile.ts.
import { join } from "node:path";
import type { Backend } from "./backend.ts";
import { completions as completionsFeed } from "./completions.ts";
import { AwaitlessError, invalid } from "./errors.ts";
import { isJobId, newJobId } from "./ids.ts";
import { isTerminal, type Job, type JobResult, type JobState } from "./job.ts";
import { collectGarbage, type GcResult, inspectJob, listJobs } from "./job-reads.ts";
import { formatDuration, jobStatus } from "./job-status.ts";
import { type JobStore, nowIso, type StoredJob } from "./job-store.ts";
import { validateLaunch } from "./launch-request.ts";
import { readLogs } from "./log-read.ts";
import { admissionFor, listQueues } from "./queue-service.ts";
import { createQueue, targetOf } from "./queue-store.ts";
import { decide } from "./reconcile.ts";
import { Redactor } from "./redact.ts";
import { buildResult, launchFailedResult, readTails } from "./result-builder.ts";
import type {
  CancelResponse,
  CompletionsResponse,
  InspectResponse,
  JobServiceApi,
  JobStatus,
  LaunchRequest,
  ListRequest,
  LogsRequest,
  LogsResponse,
  QueueCreated,
  QueueView,
  RunResponse,
  SubmitResponse,
  WaitOptions,
  WaitResponse,
} from "./service-types.ts";

export interface ServiceSettings {
  maxReturnBytes: number;
  pollIntervalMs: number;
  graceSeconds: number;
  logCapBytes: number;
  launchGraceSeconds: number;
  defaultBackend: "local" | "ssh" | "slurm";
  defaultHost: string | null;
  defaultQueue: string | null;
  /** `[hosts.NAME] queue` settings: the queue of plain jobs sent to that host. */
  hostQueues?: Record<string, string>;
  /** How long submit waits (event-driven) for the wrapper to report the command started. */
  startWaitMs: number;
  /** The caller's environment (for --secret-env values) and working directory. */
  callerEnv: Record<string, string | undefined>;
  callerCwd: string;
}

export class JobService implements JobServiceApi {
  private readonly unreachable = new Map<string, string>();
  constructor(
    readonly store: JobStore,
    private readonly backends: Partial<Record<Job["backend"], Backend>>,
    readonly settings: ServiceSettings,
  ) {}

  backendFor(job: Pick<Job, "backend">): Backend {
    const b = this.backends[job.backend];
    if (!b) {
      throw new AwaitlessError(
        "invalid_argument",
        `the ${job.backend} backend is not available in this build`,
        "use --backend local",
      );
    }
    return b;
  }

  getJob(jobId: string): StoredJob {
    if (!isJobId(jobId)) {
      throw invalid(
        `${JSON.stringify(jobId)} is not a job ID`,
        "job IDs look like job_01J…; run `awaitless list` to see them",
      );
    }
    const job = this.store.get(jobId);
    if (!job)
      throw new AwaitlessError(
        "not_found",
        `no job ${jobId}`,
        "run `awaitless list` (MCP: list_jobs) to see job IDs",
      );
    return job;
  }

  async submit(req: LaunchRequest): Promise<SubmitResponse> {
    const s = this.settings;
    const v = validateLaunch(
      req,
      {
        backend: s.defaultBackend,
        host: s.defaultHost,
        queue: s.defaultQueue,
        ...(s.hostQueues ? { hostQueues: s.hostQueues } : {}),
        cwd: s.callerCwd,
        ...(this.backends.slurm?.checkOptions
          ? { checkSlurmOptions: (raw: Record<string, string>) => this.backends.slurm!.checkOptions!(raw) }
          : {}),
      },
      s.callerEnv,
    );
    const backend = this.backendFor(v.spec);
    // A queued job waits on its target for a slot: it is `queued` until its command starts.
    const admission = admissionFor(this.store, v.spec, backend);
    const jobId = newJobId();
    const res = this.store.reserve(
      {
        job_id: jobId,
        // a Slurm job waits on the scheduler first (queued), then its allocation starts the wrapper (starting)
        state: v.spec.backend === "slurm" || admission ? "queued" : "starting",
        spec: v.spec,
        fingerprint: v.fingerprint,
        client_request_id: v.clientRequestId,
        active_key: v.activeKey,
        created_at: nowIso(),
        job_dir: v.spec.log_dir ? join(v.spec.log_dir, jobId) : this.jobDirFor(jobId),
      },
      req.allow_duplicate ?? false,
    );
    if (res.kind === "conflict") {
      throw new AwaitlessError(
        "idempotency_conflict",
        `client_request_id ${v.clientRequestId} was already used for job ${res.job.job_id} with different arguments`,
        `use a new client_request_id, or retry with exactly the arguments of ${res.job.job_id}`,
        { job_id: res.job.job_id },
      );
    }
    if (res.kind === "duplicate") {
      throw new AwaitlessError(
        "duplicate_active_job",
        `the same command is already running in the same directory as job ${res.job.job_id} (${res.job.state})`,
        `wait for it (awaitless wait ${res.job.job_id} / wait_for_job) instead of starting it twice; pass allow_duplicate to run another copy`,
        { job_id: res.job.job_id },
      );
    }
    if (res.kind === "replay") {
      const job = await this.refresh(res.job.job_id);
      return { job_id: job.job_id, state: job.state, idempotent_replay: true, job: this.toStatus(job) };
    }
    if (process.env.AWAITLESS_TEST_CRASH_AFTER_RESERVE === "1") process.exit(99);
    try {
      const backendId = await backend.launch({
        job: res.job,
        secretValues: v.secretValues,
        graceSeconds: s.graceSeconds,
        logCapBytes: s.logCapBytes,
        ...(admission ? { admission } : {}),
      });
      this.store.setBackendId(jobId, backendId);
    } catch (e) {
      this.finishWithError(res.job, e);
      throw e;
    }
    const job = await this.waitForStart(jobId);
    return { job_id: jobId, state: job.state, idempotent_replay: false, job: this.toStatus(job) };
  }

  /** A launch that failed before the wrapper ran: the job is failed with stage launch_failed, never left dangling. */
  private finishWithError(job: StoredJob, e: unknown): void {
    const message = e instanceof Error ? e.message : String(e);
    const built = launchFailedResult(
      job,
      message,
      e instanceof AwaitlessError ? e.hint : "check the message and retry",
    );
    this.store.transition(job.job_id, "failed", {
      historyReason: "launch_failed",
      terminal: {
        exit_code: null,
        signal: null,
        reason: "launch_failed",
        finished_at: built.result.finished_at,
        stdout_bytes: 0,
        stderr_bytes: 0,
        result_json: built.json,
        result_sha256: built.sha256,
      },
    });
  }

  private async waitForStart(jobId: string): Promise<StoredJob> {
    const deadline = Date.now() + this.settings.startWaitMs;
    let job = await this.refresh(jobId);
    while ((job.state === "starting" || (await this.admissionPending(job))) && Date.now() < deadline) {
      await this.backendFor(job).waitForChange(job, Math.min(50, deadline - Date.now()));
      job = await this.refresh(jobId);
    }
    return job;
  }

  /** A queued job whose wrapper has not yet taken its place in line, or was just admitted (about to start). */
  private async admissionPending(job: StoredJob): Promise<boolean> {
    if (job.state !== "queued" || (job.spec.queue === null && !job.spec.resources)) return false;
    const q = (await this.backendFor(job).observe(job)).queued;
    return q === undefined || q.admitted;
  }

  /** Is this job waiting in line for its queue or resources? */
  isWaitingInLine(job: StoredJob): boolean {
    return job.state === "queued" && (job.spec.queue !== null || job.spec.resources !== undefined);
  }

  async createQueue(name: string, concurrency: number, host?: string): Promise<QueueCreated> {
    const r = createQueue(this.store, name, targetOf(host), concurrency);
    return { ...r.row, created: r.created };
  }

  async listQueues(host?: string): Promise<QueueView[]> {
    return listQueues(
      { store: this.store, backends: this.backends, refresh: (id) => this.refresh(id) },
      host,
    );
  }

  jobDirFor(jobId: string): string {
    return `${this.store.path.replace(/awaitless\.db$/, "")}jobs/${jobId}`;
  }

  /** Why the last observation of a job could not reach its host (cleared once it can): CLI exit 7. */
  unreachableReason(jobId: string): string | undefined {
    return this.unreachable.get(jobId);
  }

  /** Observes the job's wrapper and applies the reconcile rules; returns the job as stored afterwards. */
  async refresh(jobId: string): Promise<StoredJob> {
    const job = this.getJob(jobId);
    if (isTerminal(job.state)) {
      this.unreachable.delete(jobId);
      return job;
    }
    const backend = this.backendFor(job);
    const obs = await backend.observe(job);
    if (obs.unreachable) this.unreachable.set(jobId, obs.unreachable);
    else this.unreachable.delete(jobId);
    const d = decide(job, obs, { nowMs: Date.now(), launchGraceSeconds: this.settings.launchGraceSeconds });
    if (d.kind === "none") return job;
    if (d.kind === "unreachable") {
      if (job.status_message !== d.message) this.store.setStatusMessage(jobId, d.message);
      return this.store.get(jobId)!;
    }
    if (d.kind === "active") {
      if (d.to === job.state) {
        if (d.status_message !== job.status_message) this.store.setStatusMessage(jobId, d.status_message);
        return this.store.get(jobId)!;
      }
      const patch = d.started_at ? { started_at: d.started_at } : {};
      return this.store.transition(jobId, d.to, {
        ...patch,
        status_message: d.status_message,
        historyReason:
          d.to === "stalled"
            ? "no output"
            : d.to === "running"
              ? job.state === "stalled"
                ? "output resumed"
                : "started"
              : null,
      }).job;
    }
    const built = await buildResult(backend, job, d, this.settings.maxReturnBytes);
    return this.store.transition(jobId, d.to, {
      ...(d.started_at ? { started_at: d.started_at } : {}),
      historyReason: d.reason ?? d.to,
      terminal: {
        exit_code: d.exit_code,
        signal: d.signal,
        reason: d.reason,
        finished_at: d.finished_at,
        stdout_bytes: built.stdoutBytes,
        stderr_bytes: built.stderrBytes,
        result_json: built.json,
        result_sha256: built.sha256,
      },
    }).job;
  }

  resultOf(job: StoredJob): JobResult | undefined {
    return job.result_json ? (JSON.parse(job.result_json) as JobResult) : undefined;
  }

  async wait(jobId: string, opts: WaitOptions): Promise<WaitResponse> {
    const start = Date.now();
    const deadline = opts.timeoutMs === null ? Number.POSITIVE_INFINITY : start + opts.timeoutMs;
    const progressEvery = opts.progressIntervalMs ?? 10_000;
    let nextProgress = start + progressEvery;
    let job = await this.refresh(jobId);
    while (!isTerminal(job.state)) {
      const now = Date.now();
      if (now >= deadline || opts.signal?.aborted) break;
      if (opts.onProgress && now >= nextProgress) {
        opts.onProgress(await this.progressMessage(job));
        nextProgress = now + progressEvery;
      }
      const slice = Math.min(
        this.settings.pollIntervalMs,
        deadline - now,
        opts.onProgress ? nextProgress - now : Infinity,
      );
      await this.backendFor(job).waitForChange(job, Math.max(1, slice), opts.signal);
      job = await this.refresh(jobId);
    }
    return this.waitResponse(job);
  }

  async waitResponse(job: StoredJob): Promise<WaitResponse> {
    if (isTerminal(job.state)) {
      return {
        job_id: job.job_id,
        job_state: job.state,
        wait_state: "complete",
        delivery_state: "delivered",
        result: this.resultOf(job)!,
      };
    }
    const unreachable = this.unreachable.get(job.job_id);
    if (unreachable) {
      return {
        job_id: job.job_id,
        job_state: job.state,
        wait_state: "client_timeout",
        delivery_state: "pending",
        status_message: unreachable,
        host_unreachable: unreachable,
        next_action: `The job's host cannot be reached now; the job keeps its state (${job.state}) and may still be running. Call wait_for_job with job_id ${job.job_id} again once the host is reachable.`,
        next_command: `awaitless wait ${job.job_id}`,
      };
    }
    const backend = this.backendFor(job);
    const redactor = new Redactor(Object.values(await backend.secretValues(job)));
    const tails = await readTails(backend, job, this.settings.maxReturnBytes, redactor);
    return {
      job_id: job.job_id,
      job_state: job.state,
      wait_state: "client_timeout",
      delivery_state: "pending",
      stdout_tail: tails.stdout_tail,
      stderr_tail: tails.stderr_tail,
      status_message: await this.progressMessage(job),
      next_action: `The job is still ${job.state}; it keeps running. Call wait_for_job with job_id ${job.job_id} to collect the result.`,
      next_command: `awaitless wait ${job.job_id}`,
    };
  }

  async run(
    req: LaunchRequest,
    inlineTimeoutMs: number,
    opts: Omit<WaitOptions, "timeoutMs"> = {},
  ): Promise<RunResponse> {
    const sub = await this.submit(req);
    const subJob = this.getJob(sub.job_id);
    if (this.isWaitingInLine(subJob)) {
      // A busy queue: the job may wait for hours, so the caller is told at once and collects it later.
      const w = await this.waitResponse(subJob);
      return {
        ...w,
        delivery: "detached",
        detach_reason: "queued",
        idempotent_replay: sub.idempotent_replay,
      };
    }
    const w = await this.wait(sub.job_id, { ...opts, timeoutMs: inlineTimeoutMs });
    const inline = w.wait_state === "complete";
    return {
      ...w,
      delivery: inline ? "inline" : "detached",
      ...(inline ? {} : { detach_reason: "inline_timeout" as const }),
      idempotent_replay: sub.idempotent_replay,
    };
  }

  async progressMessage(job: StoredJob): Promise<string> {
    const st = this.toStatus(job);
    if (isTerminal(job.state)) return `${job.state}`;
    const elapsed = formatDuration(st.elapsed_seconds);
    if (job.state === "queued" && job.status_message) return `${job.status_message}, for ${elapsed}`;
    if (job.state === "starting" || job.state === "queued") return `${job.state} for ${elapsed}`;
    const obs = await this.backendFor(job).observe(job);
    const last = obs.heartbeat
      ? Math.max(0, (Date.now() - Date.parse(obs.heartbeat.last_change_at)) / 1000)
      : null;
    const tail = last === null ? "" : `, last output ${formatDuration(last)} ago`;
    return `${job.state} ${elapsed}${tail}`;
  }

  async status(jobId: string): Promise<JobStatus> {
    const job = await this.refresh(jobId);
    const st = this.toStatus(job);
    const unreachable = this.unreachable.get(jobId);
    if (unreachable) return { ...st, host_unreachable: unreachable };
    if (!isTerminal(job.state) && job.state !== "starting") {
      const obs = await this.backendFor(job).observe(job);
      if (obs.heartbeat) {
        st.stdout_bytes = obs.heartbeat.stdout_bytes;
        st.stderr_bytes = obs.heartbeat.stderr_bytes;
        st.last_output_at = obs.heartbeat.last_change_at;
      }
    }
    return st;
  }

  toStatus(job: StoredJob): JobStatus {
    return jobStatus(job);
  }

  async cancel(jobId: string, gracePeriodSeconds?: number): Promise<CancelResponse> {
    const grace = gracePeriodSeconds ?? this.settings.graceSeconds;
    if (!Number.isFinite(grace) || grace < 0)
      throw invalid(`bad grace period ${grace}`, "give a duration ≥ 0, e.g. 10s");
    let job = await this.refresh(jobId);
    if (isTerminal(job.state)) {
      return {
        job_id: jobId,
        job_state: job.state,
        cancel_requested: false,
        already_terminal: true,
        result: this.resultOf(job)!,
      };
    }
    // Intent first: once persisted, any reader that sees the command die records `cancelled`.
    if (!this.store.requestCancel(jobId, nowIso())) {
      job = this.getJob(jobId);
      return {
        job_id: jobId,
        job_state: job.state,
        cancel_requested: false,
        already_terminal: true,
        result: this.resultOf(job)!,
      };
    }
    job = this.getJob(jobId);
    await this.backendFor(job).cancel(job, grace);
    const w = await this.wait(jobId, { timeoutMs: (grace + 5) * 1000 });
    job = this.getJob(jobId);
    return {
      job_id: jobId,
      job_state: w.job_state,
      cancel_requested: true,
      already_terminal: false,
      ...(w.result ? { result: w.result } : {}),
    };
  }

  logs(req: LogsRequest): Promise<LogsResponse> {
    return readLogs(this, req);
  }

  completions(
    jobIds: string[],
    opts: { after_cursor?: string; limit?: number } & WaitOptions,
  ): Promise<CompletionsResponse> {
    return completionsFeed(this, jobIds, opts);
  }

  list(req: ListRequest): Promise<JobStatus[]> {
    return listJobs(this, req);
  }

  inspect(jobId: string): Promise<InspectResponse> {
    return inspectJob(this, jobId);
  }

  /** Removes finished jobs (files, then rows) by age, count and store quota; active jobs are never touched. */
  gc(o: {
    olderThanSeconds: number | null;
    keep: number | null;
    maxBytes?: number | null;
    dryRun: boolean;
    forgetUnreachable?: boolean;
  }): Promise<GcResult> {
    return collectGarbage(this, o);
  }

  async onTerminal(jobId: string, signal: AbortSignal): Promise<JobState> {
    const w = await this.wait(jobId, { timeoutMs: null, signal });
    return w.job_state;
  }
}
