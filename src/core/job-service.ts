// The use cases shared by CLI and MCP: submit, run, wait, status, logs, cancel, list, inspect.
// Every read reconciles what it needs first (no daemon): observe the wrapper, apply the rules in reconcile.ts.
import { dirname, join } from "node:path";
import { arrayOfQueue, refuseArrayQueueCreate } from "./array-queues.ts";
import { ArrayService } from "./array-service.ts";
import type { Backend } from "./backend.ts";
import { canonicalJson, sha256Hex } from "./canonical-json.ts";
import { completions as completionsFeed } from "./completions.ts";
import { AwaitlessError, hint, invalid } from "./errors.ts";
import { isJobId, JOB_ID_08_RE, newJobId } from "./ids.ts";
import { isTerminal, type Job, type JobResult, type JobState } from "./job.ts";
import { cancelJob, cancelJobs } from "./job-cancel.ts";
import { JobDependencies } from "./job-dependencies.ts";
import { endDependencyFailed, finishWithError, launchReserved } from "./job-launch.ts";
import { resolveJobIdPrefix } from "./job-prefix.ts";
import { collectGarbage, inspectJob, listJobs, listJobsPage } from "./job-reads.ts";
import { refreshJob } from "./job-refresh.ts";
import type { RetryDeps } from "./job-retry.ts";
import { jobStatus } from "./job-status.ts";
import { type JobStore, nowIso, type StoredJob } from "./job-store.ts";
import { runJob, waitFor, waitForAnyChange } from "./job-wait.ts";
import { launchAbandoned } from "./launch-owner.ts";
import { type ValidatedLaunch, validateLaunch } from "./launch-request.ts";
import type { LifecycleDeps } from "./lifecycle-deps.ts";
import { followLogs } from "./log-follow.ts";
import { readLogs } from "./log-read.ts";
import { admissionFor, listQueues } from "./queue-service.ts";
import { createQueue, targetOf } from "./queue-store.ts";
import { Redactor, shapeRedactor } from "./redact.ts";
import { arrayTaskEnv } from "./retries.ts";
import type { SettleDeps } from "./retry-dependents.ts";
import type { ServiceCore, ServiceSettings } from "./service-deps.ts";
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
  QueueCreated,
  QueueListing,
  RunResponse,
  SubmitResponse,
  WaitOptions,
  WaitResponse,
} from "./service-types.ts";
import { describeFree } from "./store-errors.ts";
import { reserveNotice } from "./unsealed.ts";

export { QUIET_POLL_MAX_MS } from "./job-wait.ts";
export type { ServiceSettings };

export class JobService implements JobServiceApi {
  private readonly unreachable = new Map<string, string>();
  private readonly notices = new Set<string>();
  /** Retried jobs whose `final` record this process wrote (retry-dependents.ts). */
  private readonly settle: SettleDeps = {
    backendFor: (job) => this.backendFor(job),
    settled: new Set(),
    wakeHeld: (parent) => this.dependencies.wakeHeld(parent),
  };
  /** What the use-case modules (job-reads, log-read, log-follow, completions) get: never handed to a surface. */
  private readonly core: ServiceCore;
  /** What the lifecycle modules (job-launch, …) get besides: this process's memory and the retry hooks. */
  private readonly life: LifecycleDeps;
  /** Job arrays: each task a job of this service (array-service.ts). */
  readonly arrays: ArrayService;
  private readonly retries: RetryDeps;
  /** --after: the launch's plan and the held children of parents with retries (job-dependencies.ts). */
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
      status: (id) => this.status(id),
      toStatus: (job) => this.toStatus(job),
      resultOf: (job) => this.resultOf(job),
      displayRedactor: (job) => this.displayRedactor(job),
      unreachableReason: (id) => this.unreachable.get(id),
    };
    this.dependencies = new JobDependencies({
      store,
      backendFor: (job) => this.backendFor(job),
      refresh: (id) => this.refresh(id),
    });
    this.arrays = new ArrayService(store, this, {
      backend: settings.defaultBackend,
      host: settings.defaultHost,
      cwd: settings.callerCwd,
      ...(settings.hostBackends ? { hostBackends: settings.hostBackends } : {}),
    });
    this.retries = {
      store,
      settings,
      backendFor: (job) => this.backendFor(job),
      launch: async (job, secretValues) => {
        const spec = job.spec;
        const taskEnv = arrayTaskEnv(job, this.store.attempts(job.job_id)[0]?.backend_id);
        await launchReserved(
          this.life,
          Object.keys(taskEnv).length === 0
            ? job
            : { ...job, spec: { ...spec, env: { ...spec.env, ...taskEnv } } },
          { secretValues } as ValidatedLaunch,
          this.backendFor(job),
          { admission: admissionFor(this.store, spec, this.backendFor(job)), after: undefined },
          false,
        ).catch(() => undefined);
        await this.dependencies.redependChildren(job);
      },
    };
    this.life = {
      ...this.core,
      unreachable: this.unreachable,
      notices: this.notices,
      settle: this.settle,
      retries: this.retries,
      dependencies: this.dependencies,
    };
  }

  private backendFor(job: Pick<Job, "backend"> & { backend_id?: Job["backend_id"] }): Backend {
    // a job imported from Awaitless 0.8 keeps its logs in a local copy, whatever backend ran it; one 0.8 still
    // runs is watched through 0.8's own records
    const id = job.backend_id;
    const b = this.backends[id?.watch ? "awaitless08" : id?.imported_from ? "local" : job.backend];
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

  lastJobId(): string | undefined {
    return this.store.list({ limit: 1 })[0]?.job_id;
  }

  resultJson(jobId: string): string | null {
    return this.store.get(jobId)?.result_json ?? null;
  }

  followLogs(
    jobId: string,
    stream: "stdout" | "stderr" | "both",
    signal?: AbortSignal,
  ): AsyncIterable<FollowEvent> {
    return followLogs(this.core, jobId, stream, signal);
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
    const s = this.settings;
    const v = this.validated(req);
    const refusal = v.spec.host === null ? undefined : s.refuseHost?.(v.spec.host, v.spec.backend);
    if (refusal) throw refusal;
    return this.submitValidated(v, req);
  }

  async checkLaunch(req: LaunchRequest): Promise<void> {
    const v = this.validated(req);
    const refusal =
      v.spec.host === null ? undefined : this.settings.refuseHost?.(v.spec.host, v.spec.backend);
    if (refusal) throw refusal;
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

  private validated(req: LaunchRequest): ValidatedLaunch {
    const s = this.settings;
    return validateLaunch(
      req,
      {
        backend: s.defaultBackend,
        host: s.defaultHost,
        queue: s.defaultQueue,
        ...(s.hostQueues ? { hostQueues: s.hostQueues } : {}),
        ...(s.hostBackends ? { hostBackends: s.hostBackends } : {}),
        cwd: s.callerCwd,
        checkBackendOptions: (backend, raw) => this.backends[backend]?.checkOptions?.(raw) ?? raw,
      },
      s.callerEnv,
    );
  }

  private async submitValidated(v: ValidatedLaunch, req: LaunchRequest): Promise<SubmitResponse> {
    const s = this.settings;
    const backend = this.backendFor(v.spec);
    // A queued job waits on its target for a slot: it is `queued` until its command starts.
    const admission = admissionFor(this.store, v.spec, backend);
    const after = await this.dependencies.plan(v);
    const jobId = newJobId();
    const res = this.store.reserve(
      {
        job_id: jobId,
        // a Slurm job waits on the scheduler first (queued), then its allocation starts the wrapper (starting)
        state: v.spec.backend === "slurm" || admission || after?.waits.length ? "queued" : "starting",
        spec: v.spec,
        fingerprint: v.fingerprint,
        client_request_id: v.clientRequestId,
        active_key: v.activeKey,
        created_at: nowIso(),
        job_dir: v.spec.log_dir ? join(v.spec.log_dir, jobId) : this.jobDirFor(jobId),
        ...(s.launchOwners ? { launcher: s.launchOwners.self() } : {}),
      },
      req.allow_duplicate ?? false,
    );
    if (res.kind === "conflict") {
      throw new AwaitlessError(
        "idempotency_conflict",
        `client_request_id ${v.clientRequestId} was already used for job ${res.job.job_id} with different arguments`,
        hint("new_client_request_id", { job_id: res.job.job_id }),
        { job_id: res.job.job_id },
      );
    }
    if (res.kind === "duplicate") {
      throw new AwaitlessError(
        "duplicate_active_job",
        `the same command is already running in the same directory as job ${res.job.job_id} (${res.job.state})`,
        hint("wait_for_duplicate", { job_id: res.job.job_id }),
        { job_id: res.job.job_id },
      );
    }
    if (res.kind === "replay") {
      const job = await this.refresh(res.job.job_id);
      // The creating client died before launching (its process gone, no trace of a wrapper): finish that launch
      // here, exactly once among concurrent retries (the claim is one transaction). Anything less certain: replay.
      const owners = s.launchOwners;
      if (
        owners &&
        job.launcher &&
        (await launchAbandoned(job, backend, owners)) &&
        this.store.claimLaunch(job.job_id, job.launcher, owners.self())
      ) {
        const launched = await launchReserved(
          this.life,
          this.store.get(job.job_id)!,
          v,
          backend,
          { admission, after },
          true,
        );
        if (launched) return { ...launched, idempotent_replay: true, launch_resumed: true };
        return this.replayOf(job.job_id);
      }
      return {
        job_id: job.job_id,
        state: job.state,
        backend: job.backend,
        idempotent_replay: true,
        job: await this.toStatus(job),
      };
    }
    // Slurm is never asked to start a job whose dependency already failed (its afterok on an ended parent fails).
    if (after?.failed && v.spec.backend === "slurm")
      return endDependencyFailed(this.life, res.job, after.failed);
    const launched = await launchReserved(this.life, res.job, v, backend, { admission, after }, false);
    return { ...launched!, idempotent_replay: false };
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
    const s = this.settings;
    const vs = reqs.map((r) => this.validated(r.req));
    const v0 = vs[0];
    if (!v0) return [];
    const refusal = v0.spec.host === null ? undefined : s.refuseHost?.(v0.spec.host, v0.spec.backend);
    if (refusal) throw refusal;
    const backend = this.backendFor(v0.spec);
    if (!backend.launchArray)
      throw invalid(
        `the ${v0.spec.backend} backend has no array submission`,
        "run the array on this machine or an SSH host",
      );
    // the parents once for every task (the same launch): resolved IDs in each task's spec and fingerprint
    const after = await this.dependencies.plan(v0);
    if (after) {
      for (const v of vs) {
        v.spec = { ...v.spec, after: v0.spec.after! };
        v.fingerprint = sha256Hex(canonicalJson(v.spec));
      }
    }
    const jobs: StoredJob[] = [];
    const todo: { job: StoredJob; v: ValidatedLaunch; index: number }[] = [];
    let resumed = false;
    for (const [n, v] of vs.entries()) {
      const jobId = newJobId();
      const res = this.store.reserve(
        {
          job_id: jobId,
          state: "queued",
          spec: v.spec,
          fingerprint: v.fingerprint,
          client_request_id: v.clientRequestId,
          active_key: v.activeKey,
          created_at: nowIso(),
          job_dir: v.spec.log_dir ? join(v.spec.log_dir, jobId) : this.jobDirFor(jobId),
          ...(s.launchOwners ? { launcher: s.launchOwners.self() } : {}),
        },
        true,
      );
      if (res.kind === "conflict" || res.kind === "duplicate") {
        throw new AwaitlessError(
          "idempotency_conflict",
          `client_request_id ${v.clientRequestId} was already used for job ${res.job.job_id} with different arguments`,
          hint("new_client_request_id", { job_id: res.job.job_id }),
          { job_id: res.job.job_id },
        );
      }
      jobs.push(res.job);
      const index = reqs[n]!.index;
      if (res.kind !== "replay") {
        todo.push({ job: res.job, v, index });
        continue;
      }
      // a task an earlier submit reserved but never handed to the scheduler (that process is gone): launched now
      const j = res.job;
      const owners = s.launchOwners;
      if (
        owners &&
        j.launcher &&
        j.backend_id === null &&
        !isTerminal(j.state) &&
        j.cancel_requested_at === null &&
        owners.isGone(j.launcher) &&
        this.store.claimLaunch(j.job_id, j.launcher, owners.self())
      ) {
        resumed = true;
        todo.push({ job: this.store.get(j.job_id)!, v, index });
      }
    }
    if (todo.length === 0) return jobs.map((j) => j.job_id);
    if (process.env.AWAITLESS_TEST_CRASH_AFTER_RESERVE === "1") process.exit(99);
    // a parent already ended so that no task can run: every task ends dependency_failed, nothing is submitted
    if (after?.failed) {
      for (const t of todo) await endDependencyFailed(this.life, t.job, after.failed);
      return jobs.map((j) => j.job_id);
    }
    let ids: (Job["backend_id"] | Error)[];
    try {
      ids = await backend.launchArray(
        todo.map((t) => ({
          index: t.index,
          input: {
            job: t.job,
            secretValues: t.v.secretValues,
            graceSeconds: s.graceSeconds,
            logCapBytes: s.logCapBytes,
            ...(after ? { after } : {}),
          },
        })),
        { ...array, resumed },
      );
    } catch (e) {
      ids = todo.map(() => (e instanceof Error ? e : new Error(String(e))));
    }
    // after sbatch, before any task records its Slurm ID: a resubmit must find the array by its tag
    if (process.env.AWAITLESS_TEST_CRASH_AFTER_LAUNCH === "1") process.exit(98);
    todo.forEach((t, n) => {
      const id = ids[n];
      if (id instanceof Error || id === undefined || id === null) finishWithError(this.life, t.job, id);
      else this.store.setBackendId(t.job.job_id, id);
    });
    return jobs.map((j) => j.job_id);
  }

  private async replayOf(jobId: string): Promise<SubmitResponse> {
    const job = await this.refresh(jobId);
    return {
      job_id: jobId,
      state: job.state,
      backend: job.backend,
      idempotent_replay: true,
      job: await this.toStatus(job),
    };
  }

  async createQueue(name: string, concurrency: number, host?: string): Promise<QueueCreated> {
    refuseArrayQueueCreate(name);
    if (host && this.settings.hostBackends?.[host] === "slurm") {
      throw invalid(
        `${host} is a Slurm cluster ([hosts.${host}] backend = "slurm"): its jobs cannot wait in named queues`,
        "Slurm schedules them itself; create the queue on this machine or an SSH host",
      );
    }
    const r = createQueue(this.store, name, targetOf(host), concurrency);
    return { ...r.row, created: r.created };
  }

  async listQueues(host?: string, opts?: { arrays?: boolean }): Promise<QueueListing> {
    return listQueues(
      { store: this.store, backends: this.backends, refresh: (id) => this.refresh(id) },
      host,
      opts,
    );
  }

  private jobDirFor(jobId: string): string {
    return join(dirname(this.store.path), "jobs", jobId);
  }

  /** Warnings about observations that could not be stored (a full disk); each is said once. */
  storeNotices(): string[] {
    if (this.store.reserveUsed) {
      this.store.reserveUsed = false;
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
    const job = await this.refresh(jobId);
    const st = await this.toStatus(job);
    const unreachable = this.unreachable.get(jobId);
    if (unreachable) return { ...st, host_unreachable: unreachable };
    if (!isTerminal(job.state) && job.state !== "starting") {
      const obs = await this.backendFor(job).observe(job, this.dependencies.lookOf(job));
      if (obs.heartbeat) {
        st.stdout_bytes = obs.heartbeat.stdout_bytes;
        st.stderr_bytes = obs.heartbeat.stderr_bytes;
        st.last_output_at = obs.heartbeat.last_change_at;
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

  cancel(jobId: string, gracePeriodSeconds?: number): Promise<CancelResponse> {
    return cancelJob(this.life, jobId, gracePeriodSeconds);
  }

  /**
   * Cancels many jobs of one target at once: each one's intent persisted first, then one backend call for all
   * (Backend.cancelMany), then a wait for each to end. Answers how many were asked to cancel.
   */
  cancelMany(jobIds: string[], gracePeriodSeconds?: number): Promise<number> {
    return cancelJobs(this.life, jobIds, gracePeriodSeconds);
  }

  logs(req: LogsRequest): Promise<LogsResponse> {
    return readLogs(this.core, req);
  }

  completions(
    jobIds: string[],
    opts: { after_cursor?: string; limit?: number } & WaitOptions,
  ): Promise<CompletionsResponse> {
    return completionsFeed(this.core, jobIds, opts);
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

  submitAgain(jobId: string): Promise<SubmitResponse> {
    const spec = this.getJob(jobId).spec;
    const req: LaunchRequest = {
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      secret_env: spec.secret_env,
      backend: spec.backend,
      ...(spec.host !== null ? { host: spec.host } : {}),
      // an array task submitted again is a standalone job: not in the array's private queue (nor counted in it)
      ...(spec.queue !== null && arrayOfQueue(spec.queue) === undefined ? { queue: spec.queue } : {}),
      ...(spec.resources ? { resources: spec.resources } : {}),
      ...(spec.timeout_seconds !== null ? { timeout_seconds: spec.timeout_seconds } : {}),
      ...(spec.stall_timeout_seconds !== null ? { stall_timeout_seconds: spec.stall_timeout_seconds } : {}),
      artifacts: spec.artifacts,
      slurm_options: spec.slurm_options,
      ...(spec.name !== null ? { name: spec.name } : {}),
      ...(spec.after ? { after: spec.after.map((d) => `${d.job_id}:${d.on}`) } : {}),
      ...(spec.log_dir ? { log_dir: spec.log_dir } : {}),
      allow_duplicate: true,
    };
    return this.submit(req);
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
