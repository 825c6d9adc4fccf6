// Who launches a reserved job: the identity of the process that reserved (or later claimed) it, and the rule by which
// a retry with the same client_request_id may finish a launch that process abandoned.
import type { Backend } from "../backend/backend.ts";
import type { Job, LaunchOwner } from "../model/job.ts";

export type { LaunchOwner };

export interface LaunchOwners {
  /** This process, claiming a launch now. */
  self(): LaunchOwner;
  /** True only when certain that process is gone; false when it may still be launching (or lives on another machine). */
  isGone(owner: LaunchOwner): boolean;
}

/**
 * A launch may be taken over only when all of these hold: the job still waits for its launch (no backend identity,
 * not started, not cancelled), the process that owns the launch is certainly gone, and the backend finds no trace
 * of a wrapper (it answers true only when it is certain the command never started; an unreachable host is not).
 */
export async function launchAbandoned(
  job: Job,
  backend: Backend,
  owners: LaunchOwners | undefined,
): Promise<boolean> {
  if (!owners || !job.launcher || !backend.neverLaunched) return false;
  if (job.state !== "starting" && job.state !== "queued") return false;
  if (job.backend_id !== null || job.started_at !== null || job.cancel_requested_at !== null) return false;
  if (!owners.isGone(job.launcher)) return false;
  // checked after the owner is known gone: a gone process writes nothing more, so a trace cannot appear later
  return backend.neverLaunched(job).catch(() => false);
}
