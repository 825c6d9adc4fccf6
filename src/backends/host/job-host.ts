// The machine that holds job directories, as the wrapper backend sees it: this machine (LocalHost) or an SSH host
// (SshJobHost). Every method takes a job directory as that machine names it; what a job means stays in the backend.
import type { LogTail, QueueSnapshot, Stream } from "../../core/backend/backend.ts";
import type { LogQuery, LogScan } from "../../core/logs/log-query.ts";
import type { HostBackendId } from "../../core/model/backend-id.ts";
import type { ArtifactEntry } from "../../core/model/job.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { LeftoverStop } from "../../core/model/service-api.ts";

/** The job root made ready on a host: its jobs/ holds one directory per job, its queue directory the admissions. */
export interface HostRoot {
  /** Absolute, physical path of the root's jobs/ directory. */
  jobsDir: string;
  /** The queue directory the host's wrappers share (wrapper.sh "Queue admission"). */
  queueDir: string;
}

/** What the backend knew of the wrapper before this look (its launch's answer). */
export interface WrapperIdentity {
  wrapperPid?: number;
  procStart?: string;
}

export interface JobHost {
  readonly name: string;
  /** Creates the job root (0700, trusted) and installs the wrapper once per version. */
  prepare(): Promise<HostRoot>;
  /**
   * Creates `dir` with spec.sh (0600) and the exit record's reservation, then starts the wrapper on it detached (its
   * own session); what is recorded to find it again (pid, process start time, boot ID…).
   */
  start(dir: string, specText: string): Promise<HostBackendId>;
  /** The wrapper's records and liveness now; `unreachable` set when the host cannot be asked. */
  observe(dir: string, known: WrapperIdentity): Promise<Observation>;
  /**
   * cancel.sh on the host: records the request, takes a waiting job out of line (`queueDir`), wakes or stops; an
   * ended job's kept processes are stopped. `jobId` is what the job's processes carry in their environment.
   */
  cancel(dir: string, graceSeconds: number, queueDir: string | null, jobId: string): Promise<LeftoverStop>;
  readTail(dir: string, stream: Stream, maxBytes: number): Promise<LogTail>;
  scanLog(dir: string, stream: Stream, query: LogQuery): Promise<LogScan>;
  collectArtifacts(
    cwd: string,
    declared: readonly string[],
    maxInlineBytes: number,
  ): Promise<ArtifactEntry[]>;
  /** Resolves on the next change of `dir` (see Backend.waitForChange); true when watched by events. */
  waitForChange(dir: string, timeoutMs: number, signal?: AbortSignal, anyFile?: boolean): Promise<boolean>;
  queueSnapshot(): Promise<QueueSnapshot>;
  /** True only when certain that nothing a launch writes before starting a wrapper is at `dir`. */
  neverStarted(dir: string): Promise<boolean>;
  /**
   * host/settle.sh: a retried job ended `outcome` with attempt `attempt`; `dir` (its first attempt's directory) gets
   * the `final` record its held dependents wait for, and they are woken. False when `dir` is gone or unwritable.
   */
  writeFinal(dir: string, outcome: "ok" | "failed", attempt: number): Promise<boolean>;
  /**
   * Removes job `jobId`'s directory `dir` after the host's own check (the rule of core/util/job-dir-guard.ts, on the
   * host: `<…>/jobs/<jobId>[/attempts/N]` reached without a link, itself no link); anything else is refused.
   */
  remove(dir: string, jobId: string): Promise<void>;
  close?(): void;
}

/** What a scheduler backend needs of the machine that holds its job directories (Slurm: the login node's view). */
export type JobFiles = Pick<JobHost, "readTail" | "scanLog" | "collectArtifacts" | "remove">;

/** `make`, run once and its promise shared; a failure is not kept (the next call tries again). */
export function onceUntilFailure<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => {
    p ??= make().catch((e) => {
      p = null;
      throw e;
    });
    return p;
  };
}
