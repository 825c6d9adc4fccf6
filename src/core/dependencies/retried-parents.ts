// Dependents of a parent that has retries (docs/dependencies.md "A parent with retries"): the host learns that the
// parent's last attempt ended from its `final` record. The last attempt's wrapper writes it when its end is certainly
// the last; otherwise (a killed wrapper, a cancel during the backoff, a retry refused) only the client that records
// the job's end knows, and it writes the record here. A held child's reader repairs a record never written.
// On Slurm the child's native afterok names the parent's current attempt's Slurm job, and is moved to the next one;
// a :failed or :any child is held instead, and released or ended by the client that sees the parent's final end.

import type { Backend, CapabilitiesOf } from "../backend/backend.ts";
import { heldOf, schedulerJobIdOf } from "../model/backend-id.ts";
import type { DependencyWait } from "../model/dependency-plan.ts";
import { isTerminal, type Job } from "../model/job.ts";
import { conditionHolds, heldOn } from "./dependency-rules.ts";

/** What writing a `final` record needs of the service; `written` remembers the parents this process wrote it for. */
export interface FinalDeps {
  backendFor(job: Job): Backend;
  written: Set<string>;
  /** Slurm: looks at the children held for this ended parent (heldChildNow), releasing or ending them. */
  wakeHeld?(parent: Job): Promise<void>;
}

/** The outcome a dependency condition reads: a success, or any other end. */
export function finalOutcome(state: Job["state"]): "ok" | "failed" {
  return state === "succeeded" ? "ok" : "failed";
}

/**
 * A retried job has ended: writes its `final` record on its target and wakes its held dependents. A failure is left
 * for a later reader of a held child to repair (parentsToLookAt), so it never fails the caller.
 */
export async function recordFinal(deps: FinalDeps, job: Job): Promise<void> {
  if (!job.spec.retry || !isTerminal(job.state) || deps.written.has(job.job_id)) return;
  const backend = deps.backendFor(job);
  if (backend.capabilities.nativeDependencies) {
    // the scheduler holds the children: no record to write, the held ones are released or ended now
    deps.written.add(job.job_id);
    await deps.wakeHeld?.(job).catch(() => undefined);
    return;
  }
  if (!backend.writeFinal) return;
  const ok = await backend.writeFinal(job, finalOutcome(job.state)).catch(() => false);
  if (ok) deps.written.add(job.job_id);
}

/**
 * The parents with retries a reader of `child` must look at: while the child is held for them on its target, only a
 * client can make a parent's next attempt, or see a killed wrapper's attempt `lost` and record its end.
 */
export function parentsToLookAt(child: Job, get: (id: string) => Job | undefined): Job[] {
  if (child.state !== "queued" || child.started_at !== null) return [];
  const out: Job[] = [];
  for (const d of child.spec.after ?? []) {
    const p = get(d.job_id);
    if (p?.spec.retry) out.push(p);
  }
  return out;
}

/**
 * A Slurm child's dependency now: each parent still active at its current attempt's Slurm job; a parent that ended
 * so that its condition holds is left out (none left: the dependency is cleared). Null when it cannot be said now: a
 * parent between attempts (no Slurm job yet; its launch moves the dependency), or one whose condition failed (the
 * child ends dependency_failed).
 */
export function slurmWaitsNow(
  child: Job,
  get: (id: string) => Job | undefined,
  caps: CapabilitiesOf,
): DependencyWait[] | null {
  const waits: DependencyWait[] = [];
  for (const d of child.spec.after ?? []) {
    const p = get(d.job_id);
    if (!p) return null;
    if (isTerminal(p.state)) {
      if (!conditionHolds(d.on, p.state)) return null;
      continue;
    }
    if (heldOn(d, p, caps)) continue;
    const id = schedulerJobIdOf(p.backend_id);
    if (id === undefined) return null;
    waits.push({ ...d, dir: p.job_dir, scheduler_id: String(id) });
  }
  return waits;
}

/** Has a parent of `child` already ended so that its condition cannot hold? */
export function dependencyFailedNow(child: Job, get: (id: string) => Job | undefined): boolean {
  return (child.spec.after ?? []).some((d) => {
    const p = get(d.job_id);
    return p !== undefined && isTerminal(p.state) && !conditionHolds(d.on, p.state);
  });
}

/**
 * A Slurm child submitted held (backend_id.held) for :failed/:any parents with retries, while it has not started:
 * "wait" while such a parent is active, "release" once each has ended so that its condition holds, "failed" once a
 * parent has ended so that its condition cannot (it ends dependency_failed, never run). Null for any other job.
 */
export function heldChildNow(
  child: Job,
  get: (id: string) => Job | undefined,
  caps: CapabilitiesOf,
): "wait" | "release" | "failed" | null {
  if (!caps(child.backend).nativeDependencies || !heldOf(child.backend_id)) return null;
  if (child.state !== "queued" || child.started_at !== null) return null;
  if (dependencyFailedNow(child, get)) return "failed";
  for (const d of child.spec.after ?? []) {
    const p = get(d.job_id);
    if (p && heldOn(d, p, caps) && !isTerminal(p.state)) return "wait";
  }
  return "release";
}
