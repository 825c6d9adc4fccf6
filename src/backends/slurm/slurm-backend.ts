// The Slurm backend: sbatch runs the wrapper inside the allocation in <slurm_job_dir>/jobs/<job_id>; squeue/sacct

// (one of each per cluster per poll interval) and the wrapper's records decide the state. job.job_dir stays the
// LOCAL job dir (a 0600 copy of spec.sh, for redaction); backend_id.remote_dir names the cluster one.
import type { HostConfig } from "../../config/config.ts";
import type {
  ArrayLaunch,
  ArrayTaskLaunch,
  Backend,
  LaunchInput,
  LogTail,
  Stream,
} from "../../core/backend/backend.ts";
import { emptyScan, type LogQuery, type LogScan } from "../../core/logs/log-query.ts";
import { type SlurmBackendId, slurmIdOf } from "../../core/model/backend-id.ts";
import type { DependencyWait } from "../../core/model/dependency-plan.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { ArtifactEntry, BackendId, Job } from "../../core/model/job.ts";
import { HEARTBEAT_SECONDS } from "../../core/model/liveness.ts";
import type { Observation } from "../../core/model/observation.ts";
import { attemptKey } from "../../core/retries/retry-policy.ts";
import { checkJobDir, JobDirRefused, type JobDirScope, removeJobDir } from "../../core/util/job-dir-guard.ts";
import { FILES, writeCancelRequest } from "../../wrapper/protocol.ts";
import { BACKEND_CAPABILITIES } from "../capabilities.ts";
import { jobSpecText, localSecretValues, localSpecMissing, writeLocalSpec } from "../job-spec.ts";
import { SshHost } from "../ssh/ssh-host.ts";
import { resolveHostSettings } from "../ssh/ssh-target.ts";
import { type CommandRunner, LocalRunner } from "./runner.ts";
import { renderSbatchScript } from "./sbatch-script.ts";
import { launchSlurmArray, scancelArray } from "./slurm-array.ts";
import { releaseHeld, slurmDependency, updateDependency } from "./slurm-dependency.ts";
import { DEFAULT_EXIT_SETTLE_MS, slurmFacts } from "./slurm-facts.ts";
import { isLocalLoginNode, SlurmHost, slurmHostSettings } from "./slurm-host.ts";
import { clusterDirIn, sbatchOptionsFor } from "./slurm-launch-parts.ts";
import {
  forgetEnded,
  type ObserveDeps,
  observeJob,
  PERSISTED,
  type PersistedFields,
} from "./slurm-observe.ts";
import { validateSlurmOptions } from "./slurm-options.ts";
import { roundsKey, slurmPacing } from "./slurm-pacing.ts";
import { arrayTaskOf } from "./slurm-queries.ts";
import type { SharedRounds } from "./slurm-shared-rounds.ts";
import { submitBatch } from "./slurm-submit.ts";
import { SshRunner } from "./ssh-runner.ts";

export interface SlurmBackendOptions {
  hosts: Record<string, HostConfig>;
  /** One squeue + one sacct per cluster per this interval (grows with backoff); [hosts.NAME] may set its own. */
  pollIntervalMs: number;
  /** The floor no round goes below; [hosts.NAME] may set its own. Default: pollIntervalMs. */
  minPollIntervalMs?: number;
  /** The store's shared rounds: the processes of this machine poll each cluster once per interval between them. */
  rounds?: SharedRounds;
  /** How long a job with no confirmed submission may stay unresolved (plus slurm_accounting_grace). */
  launchGraceSeconds: number;
  tickSeconds?: number;
  heartbeatSeconds?: number;
  /** How long launch looks for a job by its tag after a lost sbatch reply. */
  adoptWindowMs?: number;
  /** The runner for a host (tests; the SSH adapter). Default: LocalRunner for localhost, else unavailable. */
  runnerFor?: (name: string) => CommandRunner;
  /**
   * Stores a job's backend_id after launch (JobStore.setBackendId): an ID adopted by tag and the start of the
   * accounting grace survive into the next process. Absent: both live in this process's memory only.
   */
  persistBackendId?: (jobId: string, backendId: BackendId) => void;
  /** How long a plain exit record waits for Slurm's final state (OUT_OF_MEMORY); default 30 s. */
  exitSettleMs?: number;
}

export class SlurmBackend implements Backend {
  readonly name = "slurm" as const;
  readonly capabilities = BACKEND_CAPABILITIES.slurm;
  private readonly hosts = new Map<string, SlurmHost>();
  private readonly deps: ObserveDeps;
  /** The backend_id fields this process persisted per active job, so successive writes merge instead of clobbering. */
  private readonly written = new Map<string, SlurmBackendId>();
  /** Jobs this process submitted that no round has answered for yet. */
  private readonly launched = new Set<string>();

  constructor(private readonly opts: SlurmBackendOptions) {
    const persist = opts.persistBackendId;
    this.deps = {
      adopted: new Map(),
      unsettledSince: new Map(),
      exitSeen: new Map(),
      scontrol: new Map(),
      lookups: new Map(),
      scancelled: new Set(),
      via: new Map(),
      ...(persist
        ? {
            persist: (job: Job, fields: PersistedFields) => {
              const next: SlurmBackendId = {
                ...slurmIdOf(job),
                ...this.written.get(attemptKey(job)),
                ...fields,
              };
              for (const k of PERSISTED) if (next[k] === undefined) delete next[k];
              this.written.set(attemptKey(job), next);
              persist(job.job_id, next);
            },
          }
        : {}),
    };
  }

  /** The allowlist: each key and value checked, keys in canonical form (they feed the fingerprint). */
  checkOptions(raw: Record<string, string>): Record<string, string> {
    return validateSlurmOptions(raw, "--slurm-option") as Record<string, string>;
  }

  host(name: string | null): SlurmHost {
    if (!name)
      throw new AwaitlessError("invalid_argument", "a slurm job needs a host", {
        cli: "add --host NAME (the cluster's login node)",
        mcp: "Add host: the cluster's login node.",
      });
    let h = this.hosts.get(name);
    if (!h) {
      const pacing = slurmPacing(name, this.opts.hosts, {
        intervalMs: this.opts.pollIntervalMs,
        floorMs: this.opts.minPollIntervalMs ?? this.opts.pollIntervalMs,
      });
      h = new SlurmHost(slurmHostSettings(name, this.opts.hosts), this.runnerFor(name), {
        intervalMs: pacing.intervalMs,
        minIntervalMs: pacing.floorMs,
        maxIntervalMs: pacing.maxIntervalMs,
        ...(this.opts.rounds ? { shared: { rounds: this.opts.rounds, key: roundsKey(name) } } : {}),
      });
      this.hosts.set(name, h);
    }
    return h;
  }

  private runnerFor(name: string): CommandRunner {
    if (this.opts.runnerFor) return this.opts.runnerFor(name);
    if (isLocalLoginNode(name, this.opts.hosts)) return new LocalRunner(name);
    // the login node over SSH: [hosts.NAME] over ~/.ssh/config, exactly as for the ssh backend
    return new SshRunner(new SshHost(resolveHostSettings(name, this.opts.hosts)));
  }

  async launch(input: LaunchInput): Promise<BackendId> {
    const { job } = input;
    const h = this.host(job.host);
    const prepared = await h.prepare();
    const dir = clusterDirIn(prepared.root, job);
    const cwd = h.resolveCwd(job.spec.cwd, prepared.home);
    const options = sbatchOptionsFor(h, job, input.graceSeconds);
    const held = input.after?.waits.some((w) => w.hold) === true;
    const script = renderSbatchScript({
      jobId: attemptKey(job),
      ...(job.name ? { jobName: job.name } : {}),
      slurmJobDir: dir,
      wrapperPath: prepared.wrapperPath,
      options,
      ...(slurmDependency(input.after) ? { dependency: slurmDependency(input.after)! } : {}),
      ...(held ? { hold: true } : {}),
    });
    const text = jobSpecText(job, input, {
      cwd,
      tickSeconds: this.opts.tickSeconds ?? 1,
      heartbeatSeconds: this.opts.heartbeatSeconds ?? HEARTBEAT_SECONDS,
      scheduler: "slurm",
    });
    writeLocalSpec(job.job_dir, text);
    await h.runner.mkdirp(dir, 0o700);
    await h.runner.writeFile(`${dir}/spec.sh`, text, 0o600);
    const submittedAt = new Date();
    const out = await submitBatch(
      h.runner,
      script,
      { jobId: attemptKey(job), ...(job.name ? { jobName: job.name } : {}) },
      {
        timeoutMs: h.settings.callTimeoutMs,
        adoptWindowMs: this.opts.adoptWindowMs ?? 10_000,
        minPauseMs: h.poller.floorMs,
        since: submittedAt,
      },
    );
    const id: SlurmBackendId = { remote_dir: dir, cwd, submitted_at: submittedAt.toISOString() };
    if (out.slurmJobId !== undefined) id.slurm_job_id = out.slurmJobId;
    if (out.adopted) id.adopted = true;
    if (held) id.held = true;
    if (out.unconfirmed !== undefined) id.submit_unconfirmed = out.unconfirmed;
    if (out.slurmJobId !== undefined) this.launched.add(attemptKey(job));
    return id;
  }

  async launchArray(tasks: ArrayTaskLaunch[], array: ArrayLaunch): Promise<(BackendId | Error)[]> {
    const job = tasks[0]?.input.job;
    if (!job) return [];
    // checkLaunch refuses it first; a resumed submit must not run the array before a parent's last attempt either
    if (tasks.some((t) => t.input.after?.waits.some((w) => w.hold))) {
      throw new AwaitlessError(
        "invalid_argument",
        `array ${array.arrayId} waits with :failed/:any for a parent with retries, which a Slurm array cannot`,
        "wait for the parent first, then submit the array with a new client_request_id",
      );
    }
    const h = this.host(job.host);
    const ids = await launchSlurmArray(
      {
        h,
        tickSeconds: this.opts.tickSeconds ?? 1,
        ...(this.opts.heartbeatSeconds !== undefined ? { heartbeatSeconds: this.opts.heartbeatSeconds } : {}),
        adoptWindowMs: this.opts.adoptWindowMs ?? 10_000,
      },
      tasks,
      array,
    );
    // the next round asks about every task at once (one squeue + one sacct for the whole array)
    const since = Date.now();
    tasks.forEach((t, i) => {
      const id = ids[i];
      if (id === undefined || id instanceof Error || id.slurm_job_id === undefined) return;
      this.launched.add(attemptKey(t.input.job));
      h.poller.track(id.slurm_job_id, Date.parse(id.submitted_at ?? "") || since);
    });
    return ids;
  }

  /** One scancel for every chunk of an array these tasks are in (cancel files first, as for one job). */
  async cancelMany(jobs: Job[], graceSeconds: number): Promise<void> {
    const job = jobs[0];
    if (job) await scancelArray(this.host(job.host), jobs, graceSeconds, this.deps.scancelled);
  }

  /**
   * No local spec copy: the launch writes it before the remote directory and sbatch, so nothing was submitted. Once
   * it exists, sbatch may have run: the tag search of observe adopts a job found, and nothing is resubmitted.
   */
  async neverLaunched(job: Job): Promise<boolean> {
    return localSpecMissing(job.job_dir);
  }

  /**
   * The job with its cluster directory named: recorded at launch, else derived from the prepared root as the launch
   * names it. A client that died between sbatch and storing the backend_id left none, yet the wrapper may have run
   * there to its end: its exit record and logs are read, not a COMPLETED without a record and empty tails.
   */
  private async located(job: Job): Promise<Job> {
    const bid: SlurmBackendId = slurmIdOf(job) ?? {};
    if (bid.remote_dir !== undefined || localSpecMissing(job.job_dir)) return job;
    try {
      const root = (await this.host(job.host).prepare()).root;
      return { ...job, backend_id: { ...bid, remote_dir: clusterDirIn(root, job) } };
    } catch {
      // the login node away or its root refused: read as before, the next look derives it
      return job;
    }
  }

  async observe(
    unlocated: Job,
    look: { parentMayRetry?: boolean; heldFailed?: boolean } = {},
  ): Promise<Observation> {
    const job = await this.located(unlocated);
    const h = this.host(job.host);
    const early = this.justSubmitted(h, job);
    // the event path: once the wrapper's records are there, the job is past "just submitted" (it may have ended)
    if (early && !(await this.recordsThere(h, job))) return early;
    if (early) this.launched.delete(job.job_id);
    return observeJob(h, job, this.deps, {
      launchGraceMs: this.opts.launchGraceSeconds * 1000,
      exitSettleMs: this.opts.exitSettleMs ?? DEFAULT_EXIT_SETTLE_MS,
      scancel: (id) => this.scancel(h, id, job),
      parentMayRetry: look.parentMayRetry === true,
      heldFailed: look.heldFailed === true,
    });
  }

  /** The rules ended the job (or this attempt) with `observation`: no more rounds, watch or memory for it. */
  async ended(unlocated: Job, observation: Observation): Promise<void> {
    const id = observation.scheduler?.job_id;
    if (id) forgetEnded(this.host(unlocated.host), await this.located(unlocated), id, this.deps);
    this.written.delete(attemptKey(unlocated));
  }

  /**
   * A job this process just submitted, while the floor keeps the next round away: sbatch's acceptance is all there is
   * to say, so a launch answers at once instead of waiting for the floor (the job is registered for the next round).
   */
  private justSubmitted(h: SlurmHost, job: Job): Observation | undefined {
    if (!this.launched.has(attemptKey(job))) return undefined;
    const bid: SlurmBackendId = slurmIdOf(job) ?? {};
    const id = bid.slurm_job_id;
    const since = Date.parse(bid.submitted_at ?? job.created_at);
    if (id === undefined || job.state !== "queued" || h.poller.answerableNow(id, since)) {
      this.launched.delete(attemptKey(job));
      return undefined;
    }
    return {
      started: null,
      exit: null,
      heartbeat: null,
      wrapperAlive: null,
      bootIdNow: null,
      scheduler: slurmFacts({
        job,
        slurmJobId: id,
        status: {
          kind: "active",
          state: "queued",
          statusMessage: `submitted to Slurm on ${h.name} as job ${id}; its state comes with the next scheduler round`,
        },
        patience: {
          accountingGraceMs: h.settings.accountingGraceMs,
          exitSettleMs: this.opts.exitSettleMs ?? DEFAULT_EXIT_SETTLE_MS,
          launchGraceMs: this.opts.launchGraceSeconds * 1000,
        },
      }),
    };
  }

  /** With the event path on: whether the login side sees the wrapper's started record already. */
  private async recordsThere(h: SlurmHost, job: Job): Promise<boolean> {
    const dir = slurmIdOf(job)?.remote_dir;
    const id = slurmIdOf(job)?.slurm_job_id;
    if (!h.events.on || dir === undefined || (id !== undefined && arrayTaskOf(id))) return false;
    return (await h.runner.readFile(`${dir}/${FILES.started}`, 4096).catch(() => null)) !== null;
  }

  private async scancel(h: SlurmHost, slurmJobId: string, job: Job): Promise<void> {
    const r = await h.runner.exec(["scancel", slurmJobId], { timeoutMs: h.settings.callTimeoutMs });
    if (r.code !== 0) {
      throw new AwaitlessError(
        "connection_failed",
        `scancel ${slurmJobId} (job ${job.job_id}) failed on ${h.name} (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
        {
          cli: "the cancel request is recorded; run `awaitless cancel` again once Slurm answers",
          mcp: "The cancel request is recorded; call cancel_job again once Slurm answers.",
        },
        { host: h.name, scheduler_command: "scancel", scheduler_message: r.stderr.slice(0, 2000) },
      );
    }
    this.deps.scancelled.add(slurmJobId);
  }

  async redepend(job: Job, waits: DependencyWait[]): Promise<void> {
    const id = slurmIdOf(job)?.slurm_job_id;
    if (id === undefined) return;
    const h = this.host(job.host);
    await updateDependency(
      h.runner,
      h.settings.callTimeoutMs,
      String(id),
      slurmDependency({ waits, failed: null }) ?? "",
    );
  }

  async release(job: Job): Promise<void> {
    const id = slurmIdOf(job)?.slurm_job_id;
    if (id === undefined) return;
    const h = this.host(job.host);
    await releaseHeld(h.runner, h.settings.callTimeoutMs, String(id));
  }

  async cancel(unlocated: Job, graceSeconds: number): Promise<void> {
    const job = await this.located(unlocated);
    const h = this.host(job.host);
    const bid = slurmIdOf(job);
    const dir = bid?.remote_dir;
    if (dir) {
      // Before scancel: if the allocation starts first, the wrapper never starts the command. A running command gets
      // its one TERM from the wrapper's monitor on its next tick (scancel's TERM reaches only the batch shell, the
      // wrapper, which outlives it) and KILL after the grace, or Slurm's KillWait if that is shorter.
      const grace = Math.max(0, Math.ceil(graceSeconds));
      if (h.runner.isLocal) {
        try {
          writeCancelRequest(dir, grace);
        } catch {
          // the directory is gone or not ours: scancel alone decides
        }
      } else await h.runner.writeFile(`${dir}/cancel`, `${grace}\n`, 0o600).catch(() => undefined);
    }
    const id = bid?.slurm_job_id ?? this.deps.adopted.get(attemptKey(job));
    // no ID yet (unconfirmed submission): the next observation that finds it by tag cancels it
    if (id !== undefined) await this.scancel(h, id, job);
  }

  private remoteDir(job: Job): string {
    const dir = slurmIdOf(job)?.remote_dir;
    if (!dir)
      throw new AwaitlessError(
        "not_found",
        `job ${job.job_id} has no Slurm job directory yet`,
        "wait until it is submitted",
      );
    return dir;
  }

  async readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail> {
    const dir = slurmIdOf(await this.located(job))?.remote_dir;
    if (!dir) return { bytes: new Uint8Array(0), totalBytes: 0, droppedBytes: 0 };
    return this.host(job.host).runner.files.readTail(dir, stream, maxBytes);
  }

  async scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan> {
    const dir = slurmIdOf(await this.located(job))?.remote_dir;
    if (!dir) return emptyScan(query);
    return this.host(job.host).runner.files.scanLog(dir, stream, query);
  }

  async collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]> {
    if (job.spec.artifacts.length === 0) return [];
    const h = this.host(job.host);
    const bid = slurmIdOf(job);
    const cwd = bid?.cwd ?? h.resolveCwd(job.spec.cwd, (await h.prepare()).home);
    return h.runner.files.collectArtifacts(cwd, job.spec.artifacts, maxInlineBytes);
  }

  async secretValues(job: Job): Promise<Record<string, string>> {
    return localSecretValues(job);
  }

  /** Resolves after the cluster's next poll that includes this job (shared by every waiter), or on timeout/abort. */
  waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const bid = slurmIdOf(job);
    const id = bid?.slurm_job_id ?? this.deps.adopted.get(attemptKey(job));
    if (id === undefined || !job.host) {
      return new Promise((resolve) => {
        const t = setTimeout(resolve, Math.max(0, timeoutMs));
        signal?.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    const since = Date.parse(bid?.submitted_at ?? job.created_at);
    const h = this.host(job.host);
    const dir = bid?.remote_dir;
    if (!h.events.on || dir === undefined || arrayTaskOf(id))
      return h.poller.waitForPoll(id, since, timeoutMs, signal);
    // the event path: whichever comes first, the exit record seen from the login side or the next round
    const first = new AbortController();
    const stop = () => first.abort();
    signal?.addEventListener("abort", stop, { once: true });
    return Promise.race([
      h.poller.waitForPoll(id, since, timeoutMs, first.signal),
      h.events.wait(dir, id, timeoutMs, first.signal),
    ]).finally(() => {
      signal?.removeEventListener("abort", stop);
      first.abort();
    });
  }

  /** How this job's completion is observed (inspect): the event path, or polling and why. */
  completionNote(job: Job): string {
    const bid: SlurmBackendId = slurmIdOf(job) ?? {};
    if (bid.completion === "watch")
      return "ended as seen by the login node's watch of the job directory (exit record), confirmed by sacct";
    if (bid.completion === "poll") return "ended as seen by a scheduler poll round (squeue/sacct)";
    const h = this.host(job.host);
    const every = `squeue/sacct every ${Math.round(h.poller.currentIntervalMs / 1000)} s`;
    if (bid.slurm_job_id !== undefined && arrayTaskOf(bid.slurm_job_id))
      return `an array task: the array's shared rounds (${every}, one squeue and one sacct for every task)`;
    const why = h.events.offReason;
    return why === null
      ? `events: the login node watches ${bid.remote_dir ?? "the job directory"} for the exit record, sacct confirms; ${every} besides`
      : `polling only (${why}): ${every}`;
  }

  /**
   * The cluster's copy first, then the local one. An unreachable login node (connection_failed) leaves both for a
   * later gc; any other failure to remove the cluster's copy is not worth keeping the job for.
   */
  async remove(job: Job, scope: JobDirScope): Promise<void> {
    checkJobDir(job.job_dir, scope);
    const dir = slurmIdOf(await this.located(job))?.remote_dir;
    if (dir) {
      await this.host(job.host)
        .runner.files.remove(dir, job.job_id)
        .catch((e: unknown) => {
          if (e instanceof AwaitlessError && e.code === "connection_failed") throw e;
          if (e instanceof JobDirRefused) throw e;
        });
    }
    removeJobDir(job.job_dir, scope);
  }

  /** The cluster's job directory of a job (doctor, tests). */
  jobDirOnCluster(job: Job): string {
    return this.remoteDir(job);
  }

  close(): void {
    for (const h of this.hosts.values()) h.close();
  }
}
