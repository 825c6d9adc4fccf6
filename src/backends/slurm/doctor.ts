// `doctor --host NAME` for a Slurm cluster whose login node is this machine (no SSH): Slurm's clients are installed
// and the controller answers. Each check names its host ("cl: slurm clients").
import { userInfo } from "node:os";
import type { Defaults, HostConfig } from "../../config/config.ts";
import { WATCH_INTERVAL } from "../ssh/ssh-watch.ts";
import { LocalRunner } from "./runner.ts";
import { LOCAL_LOOK_MS, NOT_SHARED_AFTER_MS } from "./slurm-events.ts";
import { isLocalLoginNode } from "./slurm-host.ts";
import { pacingDetail, roundsKey, slurmPacing } from "./slurm-pacing.ts";

export interface SlurmDoctorCheck {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const CLIENTS = ["sbatch", "squeue", "sacct", "scancel"] as const;

/** A Slurm host ([hosts.NAME] backend = "slurm") that runs Slurm's commands here instead of over SSH. */
export function isLocalSlurmHost(name: string, hosts: Record<string, HostConfig>): boolean {
  return hosts[name]?.backend === "slurm" && isLocalLoginNode(name, hosts);
}

/** A host whose jobs run on Slurm: its own backend, else [defaults] backend for a host that names none. */
export function isSlurmHost(name: string, hosts: Record<string, HostConfig>, defaults: Defaults): boolean {
  const own = hosts[name]?.backend;
  return own === "slurm" || (own === undefined && defaults.backend === "slurm");
}

/** The scheduler calls a cluster costs from this machine (doctor --host), and how many processes share them now. */
export function slurmPacingCheck(
  name: string,
  hosts: Record<string, HostConfig>,
  defaults: Defaults,
  watchers?: (key: string) => number,
): SlurmDoctorCheck {
  const pacing = slurmPacing(name, hosts, {
    intervalMs: defaults.slurm_poll_interval_seconds * 1000,
    floorMs: defaults.slurm_min_poll_interval_seconds * 1000,
  });
  return {
    check: `${name}: scheduler calls`,
    ok: true,
    detail: pacingDetail(pacing, watchers?.(roundsKey(name))),
  };
}

/**
 * How a cluster's jobs have their processes tracked (doctor --host): inside the allocation the wrapper reads the
 * scheduler's cgroup of the job (proctrack/cgroup names it job_ID), else it finds them by environment; either way
 * Slurm itself ends every process of the job when its batch script ends.
 */
export function slurmTrackingCheck(name: string): SlurmDoctorCheck {
  return {
    check: `${name}: tracking`,
    ok: true,
    detail:
      "inside each allocation the wrapper finds the job's processes in Slurm's cgroup for the job (ProctrackType=proctrack/cgroup), else by AWAITLESS_JOB_ID in their environment; Slurm ends every process of the job when its batch script ends; CPU time and peak memory from that cgroup (job_ID)",
  };
}

/** How completion is observed on a cluster (doctor --host): the event path, or polling only and why. */
export function slurmCompletionCheck(name: string, hosts: Record<string, HostConfig>): SlurmDoctorCheck {
  const check = `${name}: completion`;
  if (hosts[name]?.slurm_watch === false)
    return {
      check,
      ok: true,
      detail: `polling only (slurm_watch = false in [hosts.${name}]): a result waits for the next squeue/sacct round`,
    };
  const how = isLocalLoginNode(name, hosts)
    ? `this machine (the login node) watches slurm_job_dir: inotify and a look every ${LOCAL_LOOK_MS / 1000} s`
    : `the login node's SSH watch channel looks at slurm_job_dir every ${WATCH_INTERVAL} s`;
  return {
    check,
    ok: true,
    detail: `events: ${how}; an exit record is reported within about a second, then sacct confirms (OOM, node failure win); falls back to polling when the login node does not see the job directory (no started record ${NOT_SHARED_AFTER_MS / 1000} s into a running job)`,
  };
}

export async function slurmLocalDoctorChecks(name: string): Promise<SlurmDoctorCheck[]> {
  const runner = new LocalRunner(name);
  const missing: string[] = [];
  for (const cmd of CLIENTS) {
    const r = await runner.exec([cmd, "--version"], { timeoutMs: 10_000 }).catch(() => null);
    if (r?.code !== 0) missing.push(cmd);
  }
  const clients: SlurmDoctorCheck =
    missing.length === 0
      ? {
          check: `${name}: slurm clients`,
          ok: true,
          detail: `${CLIENTS.join(", ")} run on this machine (transport local)`,
        }
      : {
          check: `${name}: slurm clients`,
          ok: false,
          detail: `${missing.join(", ")} not found on this machine`,
          fix: `install Slurm's client commands here, or reach the cluster over SSH: drop transport = "local" in [hosts.${name}] and set its hostname`,
        };
  if (!clients.ok) return [clients];
  const q = await runner
    .exec(["squeue", "-h", "-o", "%i", "-u", userInfo().username], { timeoutMs: 20_000 })
    .catch((e: Error) => ({ code: -1, stdout: "", stderr: e.message }));
  const controller: SlurmDoctorCheck =
    q.code === 0
      ? { check: `${name}: slurm controller`, ok: true, detail: "squeue answers" }
      : {
          check: `${name}: slurm controller`,
          ok: false,
          detail: `squeue failed: ${q.stderr.trim().slice(0, 300) || `exit ${q.code}`}`,
          fix: "check that slurmctld is running and reachable from this machine (sinfo shows it)",
        };
  return [clients, controller];
}
