// Builds what a command needs: config, store, backends and the job service.
import { Awaitless08WatchBackend } from "./backends/awaitless08/watch-backend.ts";
import { localLaunchOwners } from "./backends/local/launch-owners.ts";
import { LocalBackend } from "./backends/local/local-backend.ts";
import { SlurmBackend } from "./backends/slurm/slurm-backend.ts";
import { SshBackend } from "./backends/ssh/ssh-backend.ts";
import type { Ctx } from "./cli/commands.ts";
import { loadConfig } from "./config/config.ts";
import { profileKeysFor, profileRefusal } from "./config/config-legacy.ts";
import { JobService } from "./core/job-service.ts";
import { JobStore } from "./core/job-store.ts";

export function createContext(env: Record<string, string | undefined>, configFlag?: string): Ctx {
  const config = loadConfig(env, configFlag);
  const store = JobStore.open(config.dataDir);
  const d = config.defaults;
  // The lock of a new queue directory: flock when installed, unless AWAITLESS_QUEUE_LOCK=mkdir (diagnostics, tests).
  const queueLock = env.AWAITLESS_QUEUE_LOCK === "mkdir" ? "mkdir" : "auto";
  const local = new LocalBackend({
    dataDir: config.dataDir,
    shell: env.AWAITLESS_SHELL || "/bin/sh",
    queueLock,
  });
  const service = new JobService(
    store,
    {
      local,
      awaitless08: new Awaitless08WatchBackend(),
      ssh: new SshBackend({ hosts: config.hosts, queueLock }),
      slurm: new SlurmBackend({
        hosts: config.hosts,
        pollIntervalMs: d.slurm_poll_interval_seconds * 1000,
        minPollIntervalMs: d.slurm_min_poll_interval_seconds * 1000,
        // one poller per cluster per machine: this process shares each round with the others on this store
        rounds: store.rounds,
        launchGraceSeconds: d.launch_grace_seconds,
        // adopted Slurm IDs and the accounting-grace start must survive this process (a new client continues them)
        persistBackendId: (jobId, backendId) => store.setBackendId(jobId, backendId),
      }),
    },
    {
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
      hostBackends: Object.fromEntries(
        Object.entries(config.hosts).flatMap(([name, h]) => (h.backend ? [[name, h.backend]] : [])),
      ),
      launchOwners: localLaunchOwners,
      refuseHost: (host, backend) => {
        const keys = profileKeysFor(config.legacyProfiles[host] ?? [], backend);
        return keys.length > 0 ? profileRefusal(host, keys, config.path ?? "the config") : undefined;
      },
      startWaitMs: 2000,
      callerEnv: env,
      callerCwd: process.cwd(),
    },
  );
  return { service, config };
}
