// What the service's use-case modules (reads, logs, follow, completions, gc) need of it: its settings, its store,
// its backends and its reconcile step. Only the service hands these out; the CLI and MCP see model/service-api.ts.
import type { Backend, CapabilitiesOf } from "../backend/backend.ts";
import type { AwaitlessError } from "../model/errors.ts";
import type { Job, JobResult } from "../model/job.ts";
import type { Observation } from "../model/observation.ts";
import type { JobStatus } from "../model/service-api.ts";
import type { LaunchOwners } from "../rules/launch-owner.ts";
import type { JobStore, StoredJob } from "../store/job-store.ts";
import type { Redactor } from "../util/redact.ts";

export interface ServiceSettings {
  maxReturnBytes: number;
  /** Lines of each result tail (log_tail_lines), before the byte budget cuts them. */
  logTailLines?: number;
  pollIntervalMs: number;
  graceSeconds: number;
  logCapBytes: number;
  launchGraceSeconds: number;
  defaultBackend: "local" | "ssh" | "slurm";
  defaultHost: string | null;
  defaultQueue: string | null;
  /** `[hosts.NAME] queue` settings: the queue of plain jobs sent to that host. */
  hostQueues?: Record<string, string>;
  /** `[defaults] keep_leftovers`, and `[hosts.NAME] keep_leftovers` (which wins): jobs keep what their command leaves. */
  keepLeftovers?: boolean;
  hostKeepLeftovers?: Record<string, boolean>;
  /** Who this process is as a launch owner, and whether a recorded owner is gone (resuming abandoned launches). */
  launchOwners?: LaunchOwners;
  /** `[hosts.NAME] backend` settings: how jobs sent to that host run when they name no backend. */
  hostBackends?: Record<string, "ssh" | "slurm">;
  /** What each backend can do, by name (src/backends/capabilities.ts): asked of a request before its backend is built. */
  capabilitiesOf: CapabilitiesOf;
  /** A host whose configuration this version cannot honour for a launch: the error to refuse it with (before any reserve). */
  refuseHost?: (host: string, backend: Job["backend"]) => AwaitlessError | undefined;
  /** How long submit waits (event-driven) for the wrapper to report the command started. */
  startWaitMs: number;
  /** The caller's environment (for --secret-env values) and working directory. */
  callerEnv: Record<string, string | undefined>;
  callerCwd: string;
}

/** One look at a job: the job as stored afterwards, and what its backend observed of it (see Look.observation). */
export interface Look {
  job: StoredJob;
  /**
   * The observation the look's reconcile step read; null when it made none (the job had ended, or a retry's next
   * attempt is not launched yet): who needs one then observes once.
   */
  observation: Observation | null;
}

export interface ServiceCore {
  readonly store: JobStore;
  readonly settings: ServiceSettings;
  backendFor(job: Pick<Job, "backend"> & { backend_id?: Job["backend_id"] }): Backend;
  getJob(jobId: string): StoredJob;
  /** Observes the job's wrapper and applies the reconcile rules; returns the job as stored afterwards. */
  refresh(jobId: string): Promise<StoredJob>;
  /** refresh, with the observation it made: what is said of the job after the look reads it instead of observing again. */
  look(jobId: string): Promise<Look>;
  status(jobId: string): Promise<JobStatus>;
  /** The status of a job as this look found it (status is a look and this). */
  statusOf(look: Look): Promise<JobStatus>;
  toStatus(job: StoredJob): Promise<JobStatus>;
  resultOf(job: StoredJob): JobResult | undefined;
  displayRedactor(job: StoredJob): Promise<Redactor>;
  unreachableReason(jobId: string): string | undefined;
}
