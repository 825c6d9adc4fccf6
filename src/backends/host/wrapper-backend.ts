// One backend for every job run by the wrapper on a machine that holds its directory (JobHost): local jobs and SSH
// jobs differ only in their host. The local copy of spec.sh (job.job_dir) serves redaction on both.
import type {
  Backend,
  BackendCapabilities,
  LaunchInput,
  LogTail,
  QueueSnapshot,
  Stream,
} from "../../core/backend/backend.ts";
import type { LogQuery, LogScan } from "../../core/logs/log-query.ts";
import { hostIdOf } from "../../core/model/backend-id.ts";
import type { ArtifactEntry, BackendId, BackendName, Job } from "../../core/model/job.ts";
import { HEARTBEAT_SECONDS } from "../../core/model/liveness.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { LeftoverStop } from "../../core/model/service-api.ts";
import { attemptSuffix } from "../../core/retries/retry-policy.ts";
import { checkJobDir, type JobDirScope, removeJobDir } from "../../core/util/job-dir-guard.ts";
import { BACKEND_CAPABILITIES } from "../capabilities.ts";
import { jobSpecText, localSecretValues, localSpecMissing, writeLocalSpec } from "../job-spec.ts";
import type { JobHost } from "./job-host.ts";

export interface WrapperBackendOptions {
  tickSeconds?: number;
  heartbeatSeconds?: number;
  /** Lock mechanism when a queue directory is first used (tests force mkdir); default auto. */
  queueLock?: "auto" | "mkdir";
}

/** Where a backend's jobs live: the host of a job, and whether its directory is job.job_dir itself. */
export interface HostPlacement {
  hostOf(hostName: string | null): JobHost;
  /** The host's job directory is job.job_dir (this machine); else <jobs dir>/<job_id> on the host. */
  readonly inPlace: boolean;
}

export function needsQueue(job: Job): boolean {
  return job.spec.queue !== null || (job.spec.resources ?? []).length > 0;
}

/** The queue directory of the root a job directory (<root>/jobs/<job_id>[.N]) was made in; null outside a jobs/. */
export function queueDirOfJob(jobDir: string): string | null {
  const i = jobDir.lastIndexOf("/jobs/");
  return i < 0 ? null : `${jobDir.slice(0, i)}/queues`;
}

export class WrapperBackend implements Backend {
  readonly capabilities: BackendCapabilities;

  constructor(
    readonly name: BackendName,
    private readonly placement: HostPlacement,
    private readonly opts: WrapperBackendOptions,
  ) {
    this.capabilities = BACKEND_CAPABILITIES[name];
  }

  protected hostNamed(name: string | null): JobHost {
    return this.placement.hostOf(name);
  }

  protected hostOfJob(job: Job): JobHost {
    return this.placement.hostOf(job.host);
  }

  /** The job's directory on its host: recorded at launch, else derived from the host's prepared root. */
  protected async dirOf(job: Job): Promise<string> {
    if (this.placement.inPlace) return job.job_dir;
    const known = hostIdOf(job)?.remote_dir;
    if (typeof known === "string") return known;
    const root = await this.hostOfJob(job).prepare();
    return `${root.jobsDir}/${job.job_id}${attemptSuffix(job.attempt ?? 1)}`;
  }

  /** The queue directory the job's wrapper used (its host's), when the job waits in one. */
  private async queueDirOf(job: Job): Promise<string | null> {
    if (!needsQueue(job)) return null;
    if (!this.placement.inPlace) {
      // the queue directory of the root the job was launched in (the host's root may have moved since)
      const dir = queueDirOfJob(await this.dirOf(job));
      if (dir !== null) return dir;
    }
    return (await this.hostOfJob(job).prepare()).queueDir;
  }

  async launch(input: LaunchInput): Promise<BackendId> {
    const { job } = input;
    const host = this.hostOfJob(job);
    const root = await host.prepare();
    const dir = this.placement.inPlace
      ? job.job_dir
      : `${root.jobsDir}/${job.job_id}${attemptSuffix(job.attempt ?? 1)}`;
    const text = jobSpecText(job, input, {
      tickSeconds: this.opts.tickSeconds ?? 1,
      heartbeatSeconds: this.opts.heartbeatSeconds ?? HEARTBEAT_SECONDS,
      admissionDir: root.queueDir,
      admissionLock: this.opts.queueLock ?? "auto",
    });
    // Elsewhere, a 0600 local copy first (redaction; and a launch that got no further left nothing on the host).
    if (!this.placement.inPlace) writeLocalSpec(job.job_dir, text);
    return host.start(dir, text);
  }

  async neverLaunched(job: Job): Promise<boolean> {
    if (!this.placement.inPlace && localSpecMissing(job.job_dir)) return true;
    return this.hostOfJob(job).neverStarted(await this.dirOf(job));
  }

  async observe(job: Job): Promise<Observation> {
    const host = this.hostOfJob(job);
    const own = hostIdOf(job);
    const procStart = own?.proc_start;
    const wrapperPid = own?.wrapper_pid;
    let dir: string;
    try {
      dir = await this.dirOf(job);
    } catch (e) {
      const unreachable = unreachableOf(e);
      if (unreachable) return unreachableObservation(`host ${host.name} is unreachable: ${unreachable}`);
      throw e;
    }
    return host.observe(dir, {
      ...(typeof wrapperPid === "number" ? { wrapperPid } : {}),
      ...(typeof procStart === "string" ? { procStart } : {}),
    });
  }

  async cancel(job: Job, graceSeconds: number): Promise<LeftoverStop> {
    const host = this.hostOfJob(job);
    const dir = await this.dirOf(job);
    // cancel.sh on the job's machine: only the wrapper signals (one TERM, KILL after the grace), so this survives our
    // death; a waiting job is taken out of line; a wrapper that is gone has its group stopped by the script.
    return host.cancel(dir, Math.max(0, Math.ceil(graceSeconds)), await this.queueDirOf(job), job.job_id);
  }

  async writeFinal(job: Job, outcome: "ok" | "failed"): Promise<boolean> {
    const dir = await this.dirOf(job);
    const s = attemptSuffix(job.attempt ?? 1);
    const first = s && dir.endsWith(s) ? dir.slice(0, -s.length) : dir;
    return this.hostOfJob(job).writeFinal(first, outcome, job.attempt ?? 1);
  }

  stopLeftover(job: Job, graceSeconds: number): Promise<LeftoverStop> {
    return this.cancel(job, graceSeconds);
  }

  async queueSnapshot(hostName: string | null): Promise<QueueSnapshot> {
    return this.placement.hostOf(hostName).queueSnapshot();
  }

  async readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail> {
    return this.hostOfJob(job).readTail(await this.dirOf(job), stream, maxBytes);
  }

  async scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan> {
    return this.hostOfJob(job).scanLog(await this.dirOf(job), stream, query);
  }

  async collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]> {
    return this.hostOfJob(job).collectArtifacts(job.spec.cwd, job.spec.artifacts, maxInlineBytes);
  }

  async secretValues(job: Job): Promise<Record<string, string>> {
    return localSecretValues(job);
  }

  async waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal, anyFile = false): Promise<boolean> {
    let dir: string;
    try {
      dir = await this.dirOf(job);
    } catch {
      // Unreachable before the root is known: just let the caller's slice pass.
      await sleep(timeoutMs, signal);
      return false;
    }
    return this.hostOfJob(job).waitForChange(dir, timeoutMs, signal, anyFile);
  }

  /**
   * The host's copy first, then the local one: an unreachable host leaves both for a later gc. The local path is
   * checked before anything is removed; the host checks its own (JobHost.remove).
   */
  async remove(job: Job, scope: JobDirScope): Promise<void> {
    checkJobDir(job.job_dir, scope);
    if (!this.placement.inPlace) await this.hostOfJob(job).remove(await this.dirOf(job), job.job_id);
    removeJobDir(job.job_dir, scope);
  }
}

/** The message of a connection failure (the job keeps its state), or null for any other error. */
function unreachableOf(e: unknown): string | null {
  const x = e as { code?: string; message?: string };
  return x && x.code === "connection_failed" ? (x.message ?? "connection failed") : null;
}

/** An observation that says only "cannot reach the host now" (the job keeps its state). */
export function unreachableObservation(message: string): Observation {
  return {
    started: null,
    exit: null,
    wrapperAlive: null,
    bootIdNow: null,
    heartbeat: null,
    unreachable: message,
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, Math.max(0, ms));
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}
