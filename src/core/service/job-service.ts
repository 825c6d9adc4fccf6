// JobService, the one class the CLI and MCP call (JobServiceApi): it holds the store, the backends and this process's
// memory, and hands each use case what it needs: submit (service/submit.ts), launch (service/launch.ts), refresh
// (service/refresh.ts), wait and run (service/wait.ts), cancel (service/cancel.ts), --after
// (dependencies/dependency-actions.ts), reads (service/reads.ts, logs/read.ts, logs/follow.ts,
// service/completions.ts). Every read reconciles what it needs first (no daemon). What status, list and wait do not
// use (submit and launch, cancel, logs, results, queues) is imported when its method is first called.

import { dirname } from "node:path";
import { ArrayService } from "../arrays/array-service.ts";
import type { Backend } from "../backend/backend.ts";
import { JobDependencies } from "../dependencies/dependency-actions.ts";
import type { FinalDeps } from "../dependencies/retried-parents.ts";
import { imported08Of, watched08Of } from "../model/backend-id.ts";
import { AwaitlessError, hint, invalid } from "../model/errors.ts";
import { isJobId, JOB_ID_08_RE } from "../model/ids.ts";
import { isTerminal, type Job, type JobResult, type JobState } from "../model/job.ts";
import type {
  CancelResponse,
  CompletionsResponse,
  FollowEvent,
  GcOptions,
  GcResult,
  InspectResponse,
  JobServiceApi,
  JobStatus,
  LaunchRequest,
  ListRequest,
  LogsRequest,
  LogsResponse,
  QueueChanged,
  QueueCreated,
  QueueListing,
  RunResponse,
  SubmitResponse,
  WaitOptions,
  WaitResponse,
} from "../model/service-api.ts";
import type { RetryDeps } from "../retries/retry-attempt.ts";
import type { JobStore, StoredJob } from "../store/job-store.ts";
import { targetOf } from "../store/queue-table.ts";
import { describeFree } from "../util/no-space.ts";
import { Redactor, shapeRedactor } from "../util/redact.ts";
import { resolveJobIdPrefix } from "./job-prefix.ts";
import type { ValidatedLaunch } from "./launch-request.ts";
import type { LifecycleDeps } from "./lifecycle-context.ts";
import { collectGarbage, inspectJob, listJobs, listJobsPage } from "./reads.ts";
import { lookAt, refreshJob } from "./refresh.ts";
import type { Look, ServiceCore, ServiceSettings } from "./service-context.ts";
import { jobStatus } from "./status.ts";
import { reserveNotice } from "./unsealed.ts";
import { runJob, waitFor, waitForAnyChange } from "./wait.ts";

export { QUIET_POLL_MAX_MS } from "./wait.ts";
export type { ServiceSettings };

export class JobService implements JobServiceApi {
  private readonly unreachable = new Map<string, string>();
  private readonly notices = new Set<string>();
  /** Retried jobs whose `final` record this process wrote (dependencies/retried-parents.ts). */
  private readonly final: FinalDeps = {
    backendFor: (job) => this.backendFor(job),
    written: new Set(),
    wakeHeld: (parent) => this.dependencies.wakeHeld(parent),
  };
  /** What the use-case modules (reads, logs/read, logs/follow, completions) get: never handed to a surface. */
  private readonly core: ServiceCore;
  /** What the lifecycle modules (launch, submit, refresh, …) get besides: this process's memory, the retry hooks. */
  private readonly life: LifecycleDeps;
  /** Job arrays: each task a job of this service (array-service.ts). */
  readonly arrays: ArrayService;
  private readonly retries: RetryDeps;
  /** --after: the launch's plan and the held children of parents with retries (dependencies/dependency-actions.ts). */
  private readonly dependencies: JobDependencies;
  constructor(
    private readonly store: JobStore,
    private readonly backends: Partial<Record<Job["backend"] | "awaitless08", Backend>>,
    private readonly settings: ServiceSettings,
  ) {
    this.core = {
      store,
      settings,
      backendFor: (job) => this.backendFor(job),
      getJob: (id) => this.getJob(id),
      refresh: (id) => this.refresh(id),
      look: (id) => lookAt(this.life, id),
      status: (id) => this.status(id),
      statusOf: (look) => this.statusOf(look),
      toStatus: (job) => this.toStatus(job),
      resultOf: (job) => this.resultOf(job),
      displayRedactor: (job) => this.displayRedactor(job),
      unreachableReason: (id) => this.unreachable.get(id),
    };
    this.dependencies = new JobDependencies({
      store,
      backendFor: (job) => this.backendFor(job),
      refresh: (id) => this.refresh(id),
      capabilitiesOf: settings.capabilitiesOf,
    });
    this.arrays = new ArrayService(store, this, {
      backend: settings.defaultBackend,
      host: settings.defaultHost,
      cwd: settings.callerCwd,
      capabilitiesOf: settings.capabilitiesOf,
      ...(settings.hostBackends ? { hostBackends: settings.hostBackends } : {}),
    });
    this.retries = {
      store,
      settings,
      backendFor: (job) => this.backendFor(job),
      launch: async (job, secretValues) =>
        (await import("./launch.ts")).launchAttempt(this.life, job, secretValues),
    };
    this.life = {
      ...this.core,
      unreachable: this.unreachable,
      notices: this.notices,
      final: this.final,
      retries: this.retries,
      dependencies: this.dependencies,
    };
  }

  private backendFor(job: Pick<Job, "backend"> & { backend_id?: Job["backend_id"] }): Backend {
    // a job imported from Awaitless 0.8 keeps its logs in a local copy, whatever backend ran it; one 0.8 still
    // runs is watched through 0.8's own records
    const b = this.backends[watched08Of(job) ? "awaitless08" : imported08Of(job) ? "local" : job.backend];
    if (!b) {
      throw new AwaitlessError(
        "invalid_argument",
        `the ${job.backend} backend is not available in this build`,
        hint("backend_unavailable"),
      );
    }
    return b;
  }

  /** The CLI's job argument: a full ID, or a unique prefix of one (job-prefix.ts); MCP never calls this. */
  resolveJobId(text: string): string {
    return resolveJobIdPrefix(this.store, text);
  }

  resultJson(jobId: string): string | null {
    return this.store.get(jobId)?.result_json ?? null;
  }

  async *followLogs(
    jobId: string,
    stream: "stdout" | "stderr" | "both",
    signal?: AbortSignal,
  ): AsyncIterable<FollowEvent> {
    const { followLogs } = await import("../logs/follow.ts");
    yield* followLogs(this.core, jobId, stream, signal);
  }

  getJob(jobId: string): StoredJob {
    if (!isJobId(jobId)) {
      throw invalid(`${JSON.stringify(jobId)} is not a job ID`, hint("job_id_shape"));
    }
    const job = this.store.get(jobId);
    if (!job)
      throw new AwaitlessError(
        "not_found",
        `no job ${jobId}`,
        JOB_ID_08_RE.test(jobId) ? hint("import_08_store") : hint("find_job_id"),
      );
    return job;
  }

  async submit(req: LaunchRequest): Promise<SubmitResponse> {
    const v = await this.validated(req);
    const { refuseHost, submitValidated } = await import("./submit.ts");
    refuseHost(this.life, v);
    return submitValidated(this.life, v, req);
  }

  /**
   * The tasks of an array in one backend submission (Backend.launchArray): every task reserved as a job first (a
   * replayed key is that task again), then the new ones and those an earlier, dead submit left unlaunched are handed
   * to the backend together. Answers each task's job ID, in order.
   */
  async launchArrayTasks(
    reqs: { req: LaunchRequest; index: number }[],
    array: { arrayId: string; indices: readonly number[]; throttle: number },
  ): Promise<string[]> {
    const tasks = [];
    for (const r of reqs) tasks.push({ v: await this.validated(r.req), index: r.index });
    const { launchArrayTasks } = await import("./submit.ts");
    return launchArrayTasks(this.life, tasks, array);
  }

  async checkLaunch(req: LaunchRequest): Promise<void> {
    const v = await this.validated(req);
    (await import("./submit.ts")).refuseHost(this.life, v);
    const plan = await this.dependencies.plan(v);
    // an array's one sbatch --array is not held for a :failed/:any parent with retries (heldOn): refused, not run early
    const held = plan?.waits.find((w) => w.hold);
    if (held) {
      throw invalid(
        `job ${held.job_id} is ${this.getJob(held.job_id).state} and may be retried (it has retries): on a Slurm cluster an array cannot wait for its last attempt with :${held.on}`,
        hint("after_retried_slurm_array", { job_id: held.job_id }),
        { job_id: held.job_id },
      );
    }
  }

  private async validated(req: LaunchRequest): Promise<ValidatedLaunch> {
    const s = this.settings;
    const { validateLaunch } = await import("./launch-request.ts");
    return validateLaunch(
      req,
      {
        backend: s.defaultBackend,
        host: s.defaultHost,
        queue: s.defaultQueue,
        ...(s.hostQueues ? { hostQueues: s.hostQueues } : {}),
        ...(s.keepLeftovers ? { keepLeftovers: true } : {}),
        ...(s.hostKeepLeftovers ? { hostKeepLeftovers: s.hostKeepLeftovers } : {}),
        ...(s.hostBackends ? { hostBackends: s.hostBackends } : {}),
        cwd: s.callerCwd,
        capabilitiesOf: s.capabilitiesOf,
        checkBackendOptions: (backend, raw) => this.backends[backend]?.checkOptions?.(raw) ?? raw,
      },
      s.callerEnv,
    );
  }

  async createQueue(name: string, concurrency: number, host?: string): Promise<QueueCreated> {
    (await import("../queues/array-queues.ts")).refuseArrayQueueCreate(name);
    const configured = host ? this.settings.hostBackends?.[host] : undefined;
    const can = configured && this.settings.capabilitiesOf(configured);
    if (host && can && !can.namedQueues) {
      throw invalid(
        `${host} is a ${can.label} cluster ([hosts.${host}] backend = "${configured}"): its jobs cannot wait in named queues`,
        `${can.label} schedules them itself; create the queue on this machine or an SSH host`,
      );
    }
    const r = this.store.queues.create(name, targetOf(host), concurrency);
    return { ...r.row, created: r.created };
  }

  async setQueue(name: string, concurrency: number, host?: string): Promise<QueueChanged> {
    (await import("../queues/array-queues.ts")).refuseArrayQueueCreate(name);
    await this.refreshQueue(name);
    const r = this.store.queues.setConcurrency(name, targetOf(host), concurrency);
    return {
      name,
      target: r.row.target,
      concurrency,
      previous_concurrency: r.previous,
      waiting_with_previous: r.waiting,
    };
  }

  async deleteQueue(name: string, host?: string): Promise<{ name: string; target: string; deleted: true }> {
    (await import("../queues/array-queues.ts")).refuseArrayQueueCreate(name);
    await this.refreshQueue(name);
    const row = this.store.queues.delete(name, targetOf(host));
    return { name, target: row.target, deleted: true };
  }

  /** Reconciles the queue's unfinished jobs, so that ended ones are counted as ended. */
  private async refreshQueue(name: string): Promise<void> {
    const active = this.store.list({
      queue: name,
      states: ["queued", "starting", "running", "stalled"],
      limit: 10_000,
    });
    for (const j of active) await this.refresh(j.job_id).catch(() => undefined);
  }

  async listQueues(host?: string, opts?: { arrays?: boolean }): Promise<QueueListing> {
    const { listQueues } = await import("../queues/queue-service.ts");
    return listQueues(
      { store: this.store, backends: this.backends, refresh: (id) => this.refresh(id) },
      host,
      opts,
    );
  }

  /** Warnings about observations that could not be stored (a full disk); each is said once. */
  storeNotices(): string[] {
    if (this.store.takeReserveUsed()) {
      this.notices.add(reserveNotice(this.store.path, describeFree(dirname(this.store.path))));
    }
    const all = [...this.notices];
    this.notices.clear();
    return all;
  }

  /** Observes the job's wrapper and applies the reconcile rules; returns the job as stored afterwards. */
  refresh(jobId: string): Promise<StoredJob> {
    return refreshJob(this.life, jobId);
  }

  private resultOf(job: StoredJob): JobResult | undefined {
    return job.result_json ? (JSON.parse(job.result_json) as JobResult) : undefined;
  }

  async status(jobId: string): Promise<JobStatus> {
    return this.statusOf(await lookAt(this.life, jobId));
  }

  /** The status of a job as one look found it. */
  private async statusOf({ job, observation }: Look): Promise<JobStatus> {
    const jobId = job.job_id;
    const st = await this.toStatus(job);
    const unreachable = this.unreachable.get(jobId);
    if (unreachable) return { ...st, host_unreachable: unreachable };
    // an ended job: what it left running and what it cost, as its result says
    const ended = this.resultOf(job);
    if (ended?.leftovers) st.leftovers = ended.leftovers;
    if (ended?.resources) st.resources = ended.resources;
    if (!isTerminal(job.state) && job.state !== "starting") {
      // the look's own observation; a look that made none (a retry's next attempt not launched yet) gets one
      const obs = observation ?? (await this.backendFor(job).observe(job, this.dependencies.lookOf(job)));
      if (obs.heartbeat) {
        st.stdout_bytes = obs.heartbeat.stdout_bytes;
        st.stderr_bytes = obs.heartbeat.stderr_bytes;
        // the heartbeat's last change is the command's start until it writes something
        const wrote = obs.heartbeat.stdout_bytes + obs.heartbeat.stderr_bytes > 0;
        st.last_output_at = wrote ? obs.heartbeat.last_change_at : null;
      }
    }
    return st;
  }

  private async toStatus(job: StoredJob): Promise<JobStatus> {
    return jobStatus(job, await this.displayRedactor(job));
  }

  /** Redacts what is shown of a job's spec (argv typed with a secret in it): its secret values and credential shapes. */
  private async displayRedactor(job: StoredJob): Promise<Redactor> {
    if (job.spec.secret_env.length === 0) return shapeRedactor;
    return new Redactor(Object.values(await this.backendFor(job).secretValues(job)));
  }

  async cancel(jobId: string, gracePeriodSeconds?: number): Promise<CancelResponse> {
    const { cancelJob } = await import("./cancel.ts");
    return cancelJob(this.life, jobId, gracePeriodSeconds);
  }

  /**
   * Cancels many jobs of one target at once: each one's intent persisted first, then one backend call for all
   * (Backend.cancelMany), then a wait for each to end. Answers how many were asked to cancel.
   */
  async cancelMany(jobIds: string[], gracePeriodSeconds?: number): Promise<number> {
    const { cancelJobs } = await import("./cancel.ts");
    return cancelJobs(this.life, jobIds, gracePeriodSeconds);
  }

  async logs(req: LogsRequest): Promise<LogsResponse> {
    const { readLogs } = await import("../logs/read.ts");
    return readLogs(this.core, req);
  }

  async completions(
    jobIds: string[],
    opts: { after_cursor?: string; limit?: number } & WaitOptions,
  ): Promise<CompletionsResponse> {
    const { completions } = await import("./completions.ts");
    return completions(this.core, jobIds, opts);
  }

  list(req: ListRequest): Promise<JobStatus[]> {
    return listJobs(this.core, req);
  }

  listPage(req: ListRequest): Promise<{ jobs: JobStatus[]; total: number }> {
    return listJobsPage(this.core, req);
  }

  inspect(jobId: string): Promise<InspectResponse> {
    return inspectJob(this.core, jobId);
  }

  /** Removes finished jobs (files, then rows) by age, count and store quota; active jobs are never touched. */
  gc(o: GcOptions): Promise<GcResult> {
    return collectGarbage(this.core, o);
  }

  async submitAgain(jobId: string): Promise<SubmitResponse> {
    const spec = this.getJob(jobId).spec;
    const { againRequest } = await import("./submit.ts");
    return this.submit(againRequest(spec));
  }

  wait(jobId: string, opts: WaitOptions): Promise<WaitResponse> {
    return waitFor(this.life, jobId, opts);
  }

  run(
    req: LaunchRequest,
    inlineTimeoutMs: number,
    opts: Omit<WaitOptions, "timeoutMs"> = {},
  ): Promise<RunResponse> {
    return runJob(this.life, (r) => this.submit(r), req, inlineTimeoutMs, opts);
  }

  waitForAnyChange(jobIds: string[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return waitForAnyChange(this.life, jobIds, timeoutMs, signal);
  }

  async onTerminal(jobId: string, signal: AbortSignal): Promise<JobState> {
    const w = await this.wait(jobId, { timeoutMs: null, signal, untracked: true });
    return w.job_state;
  }
}
