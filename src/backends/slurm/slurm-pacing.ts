// Owns how often a cluster's scheduler is asked: the per-host interval and floor from [hosts.NAME] over the defaults,
// the backoff ceiling, the store key of the cluster's shared rounds, and the calls per minute that implies (doctor).
import type { HostConfig } from "../../config/config.ts";

export interface SlurmPacing {
  /** Between regular rounds (ms); never below the floor. */
  intervalMs: number;
  /** No round starts sooner than this after the last one (ms). */
  floorMs: number;
  /** The backoff ceiling (ms). */
  maxIntervalMs: number;
}

/** Each round is one squeue and one sacct. */
export const CALLS_PER_ROUND = 2;

/** [hosts.NAME] over the given defaults (ms); a host's floor raises an inherited interval below it. */
export function slurmPacing(
  name: string,
  hosts: Record<string, HostConfig>,
  defaults: { intervalMs: number; floorMs: number },
): SlurmPacing {
  const h = hosts[name] ?? {};
  const floorMs =
    h.slurm_min_poll_interval_seconds !== undefined
      ? h.slurm_min_poll_interval_seconds * 1000
      : defaults.floorMs;
  const wantMs =
    h.slurm_poll_interval_seconds !== undefined ? h.slurm_poll_interval_seconds * 1000 : defaults.intervalMs;
  const intervalMs = Math.max(wantMs, floorMs);
  return { intervalMs, floorMs, maxIntervalMs: Math.max(60_000, 4 * intervalMs) };
}

/** The store key of a cluster's shared rounds. */
export function roundsKey(name: string): string {
  return `slurm:${name}`;
}

/**
 * Scheduler calls per minute from this machine: steady (while jobs are watched and none is new), and at most
 * (every round at the floor, when new jobs keep arriving). Independent of how many processes and jobs there are.
 */
export function callsPerMinute(p: SlurmPacing): { steady: number; atMost: number } {
  const per = (ms: number) => Math.round(((CALLS_PER_ROUND * 60_000) / ms) * 10) / 10;
  return { steady: per(p.intervalMs), atMost: per(p.floorMs) };
}

/** The doctor line for a cluster's scheduler etiquette. */
export function pacingDetail(p: SlurmPacing, watchers?: number): string {
  const c = callsPerMinute(p);
  const s = (ms: number) => `${Math.round(ms / 100) / 10}s`;
  const now =
    watchers === undefined
      ? ""
      : watchers === 0
        ? "; no process on this machine watches jobs there now"
        : `; ${watchers} process${watchers === 1 ? "" : "es"} on this machine watch${watchers === 1 ? "es" : ""} jobs there now`;
  const peak = c.atMost > c.steady ? ` (at most ${c.atMost} while new jobs arrive)` : "";
  return (
    `one squeue + one sacct every ${s(p.intervalMs)} (floor ${s(p.floorMs)}) for all jobs, shared by every process ` +
    `on this machine: ~${c.steady} calls/min while jobs are active${peak}, none while idle; ` +
    `backoff up to ${s(p.maxIntervalMs)} when Slurm errs or answers slowly${now}`
  );
}
