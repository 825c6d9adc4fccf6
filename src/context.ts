// Builds what a command needs (Ctx): config, store, backends and the job service.
import { dirname } from "node:path";
import { capabilitiesOf } from "./backends/capabilities.ts";
import { localLaunchOwners } from "./backends/local/launch-owners.ts";
import { LocalBackend } from "./backends/local/local-backend.ts";
import { type Config, loadConfig } from "./config/config.ts";
import { profileKeysFor, profileRefusal } from "./config/config-legacy.ts";
import type { Backend } from "./core/backend/backend.ts";
import { any08File, awaitless08Dirs } from "./core/import-08/find-08.ts";
import type { ImportReport } from "./core/import-08/import-08.ts";
import { useHintTable } from "./core/model/errors.ts";
import type { Job } from "./core/model/job.ts";
import { arrayOfQueue } from "./core/model/queue-names.ts";
import type { ArrayApi, JobServiceApi } from "./core/model/service-api.ts";
import { JobService, type ServiceSettings } from "./core/service/job-service.ts";
import { recentJobWords } from "./core/service/job-words.ts";
import { JobStore } from "./core/store/job-store.ts";
import { HINTS } from "./hints.ts";

// Core names what to do next by action; this process words each action for its surface.
useHintTable(HINTS);

/** What of the store the housekeeping commands read and write (doctor's figures, the automatic gc's claim, the 0.8
 * notice, completion words): no job rows, no transitions. */
export interface StoreHousekeeping {
  readonly path: string;
  countJobs(): number;
  /** Every job's directory on this machine (doctor sums them against the quota). */
  jobDirs(): { job_id: string; job_dir: string }[];
  /** The newest job and array IDs and the newest arrays' task addresses, without reconciling anything (completion
   * must never contact a host). */
  recentJobIds(limit: number): string[];
  queueNames(): string[];
  meta(key: string): string | undefined;
  setMeta(key: string, value: string): void;
  /** Whether a file by Awaitless 0.8's database name is where an 0.8 store would be (one stat each, nothing opened):
   * the CLI loads its offer to import only then. */
  near08(env: Record<string, string | undefined>): boolean;
  claimAutoGc(intervalSeconds: number): boolean;
  /** How many processes watch jobs under a shared scheduler round's key now (doctor's scheduler-calls row). */
  schedulerWatchers(key: string, nowMs: number): number;
}

/** What a CLI command or the MCP server works with. */
export interface Ctx {
  /** The job use cases: the one interface the CLI and the MCP server share. */
  service: JobServiceApi;
  /** Job arrays over that service: their tasks are its jobs (core/arrays/array-service.ts). */
  arrays: ArrayApi;
  config: Config;
  store: StoreHousekeeping;
  /** `awaitless import`: the jobs of the Awaitless 0.8 store in `source` (`sourceName` in refusals) brought here. */
  import08(source: string, sourceName: string): Promise<ImportReport>;
}

export type Backends = Partial<Record<Job["backend"] | "awaitless08", Backend>>;

/**
 * The backends, each made on first use: a command about local jobs never evaluates the SSH, Slurm or 0.8 modules.
 * They are loaded with `require` (synchronous, bundled like an import), not `import()`, because the job service
 * reaches a backend synchronously (its `backendFor`, Slurm's option check while a request is validated).
 */
export function createBackends(
  config: Config,
  env: Record<string, string | undefined>,
  store: JobStore,
): Backends {
  const d = config.defaults;
  // The lock of a new queue directory: flock when installed, unless AWAITLESS_QUEUE_LOCK=mkdir (diagnostics, tests).
  const queueLock = env.AWAITLESS_QUEUE_LOCK === "mkdir" ? "mkdir" : "auto";
  const made: Backends = {
    local: new LocalBackend({
      dataDir: config.dataDir,
      shell: env.AWAITLESS_SHELL || "/bin/sh",
      queueLock,
    }),
  };
  return {
    local: made.local,
    get awaitless08() {
      made.awaitless08 ??= new (
        require("./backends/awaitless08/watch-backend.ts") as typeof import("./backends/awaitless08/watch-backend.ts")
      ).Awaitless08WatchBackend();
      return made.awaitless08;
    },
    get ssh() {
      made.ssh ??= new (
        require("./backends/ssh/ssh-backend.ts") as typeof import("./backends/ssh/ssh-backend.ts")
      ).SshBackend({ hosts: config.hosts, queueLock });
      return made.ssh;
    },
    get slurm() {
      made.slurm ??= new (
        require("./backends/slurm/slurm-backend.ts") as typeof import("./backends/slurm/slurm-backend.ts")
      ).SlurmBackend({
        hosts: config.hosts,
        pollIntervalMs: d.slurm_poll_interval_seconds * 1000,
        minPollIntervalMs: d.slurm_min_poll_interval_seconds * 1000,
        // one poller per cluster per machine: this process shares each round with the others on this store
        rounds: store.rounds,
        launchGraceSeconds: d.launch_grace_seconds,
        // adopted Slurm IDs and the accounting-grace start must survive this process (a new client continues them)
        persistBackendId: (jobId, backendId) => store.setBackendId(jobId, backendId),
      });
      return made.slurm;
    },
  };
}

export function serviceSettings(config: Config, env: Record<string, string | undefined>): ServiceSettings {
  const d = config.defaults;
  return {
    maxReturnBytes: d.max_return_bytes,
    logTailLines: d.log_tail_lines,
    pollIntervalMs: d.poll_interval_seconds * 1000,
    graceSeconds: d.grace_period_seconds,
    logCapBytes: d.log_cap_bytes,
    launchGraceSeconds: d.launch_grace_seconds,
    defaultBackend: d.backend,
    defaultHost: d.host,
    defaultQueue: d.queue,
    hostQueues: Object.fromEntries(
      Object.entries(config.hosts).flatMap(([name, h]) => (h.queue ? [[name, h.queue]] : [])),
    ),
    keepLeftovers: d.keep_leftovers,
    hostKeepLeftovers: Object.fromEntries(
      Object.entries(config.hosts).flatMap(([name, h]) =>
        h.keep_leftovers === undefined ? [] : [[name, h.keep_leftovers]],
      ),
    ),
    hostBackends: Object.fromEntries(
      Object.entries(config.hosts).flatMap(([name, h]) => (h.backend ? [[name, h.backend]] : [])),
    ),
    capabilitiesOf,
    launchOwners: localLaunchOwners,
    refuseHost: (host, backend) => {
      const keys = profileKeysFor(config.legacyProfiles[host] ?? [], backend);
      return keys.length > 0 ? profileRefusal(host, keys, config.path ?? "the config") : undefined;
    },
    startWaitMs: 2000,
    callerEnv: env,
    callerCwd: process.cwd(),
  };
}

export function createContext(env: Record<string, string | undefined>, configFlag?: string): Ctx {
  const config = loadConfig(env, configFlag);
  const store = JobStore.open(config.dataDir);
  const backends = createBackends(config, env, store);
  const service = new JobService(store, backends, serviceSettings(config, env));
  const arrays = service.arrays;
  const housekeeping: StoreHousekeeping = {
    path: store.path,
    countJobs: () => store.gc.countJobs(),
    jobDirs: () => store.gc.jobDirs(),
    recentJobIds: (limit) => recentJobWords(store, limit),
    queueNames: () =>
      store.queues
        .list()
        .map((q) => q.name)
        .filter((n) => arrayOfQueue(n) === undefined),
    meta: (key) => store.meta.get(key),
    setMeta: (key, value) => store.meta.set(key, value),
    near08: (env) => any08File(awaitless08Dirs(env, dirname(store.path))),
    claimAutoGc: (seconds) => store.meta.claimAutoGc(seconds),
    schedulerWatchers: (key, nowMs) => store.rounds.watchers(key, nowMs),
  };
  // loaded on demand, as the command is: no other command reads 0.8 stores
  const import08 = async (source: string, sourceName: string) => {
    const { importAwaitless08 } = await import("./core/import-08/import-08.ts");
    return importAwaitless08({
      store,
      local: backends.local!,
      dataDir: dirname(store.path),
      source,
      sourceName,
      maxReturnBytes: config.defaults.max_return_bytes,
    });
  };
  return { service, arrays, config, store: housekeeping, import08 };
}
