// Job dependencies on Slurm: parents still active become one native sbatch --dependency (both on one cluster);
// a pending reason of DependencyNeverSatisfied ends the child dependency_failed (and it is scancelled).
import type { DependencyPlan } from "../../core/dependencies.ts";
import type { Job } from "../../core/job.ts";
import type { Decision } from "../../core/reconcile.ts";
import { dependencyFailed } from "../../core/reconcile.ts";

const TYPE = { ok: "afterok", any: "afterany", failed: "afternotok" } as const;

/** "afterok:12:13,afterany:14" for the plan's waits; undefined when there is nothing to wait for. */
export function slurmDependency(plan: DependencyPlan | undefined): string | undefined {
  const by = new Map<string, string[]>();
  for (const w of plan?.waits ?? []) {
    if (w.scheduler_id === undefined) continue;
    const t = TYPE[w.on];
    by.set(t, [...(by.get(t) ?? []), w.scheduler_id]);
  }
  if (by.size === 0) return undefined;
  return [...by].map(([t, ids]) => `${t}:${ids.join(":")}`).join(",");
}

/** The decision for a child Slurm holds with DependencyNeverSatisfied: cancelled, reason dependency_failed. */
export function neverSatisfied(job: Job, nowMs: number): Decision {
  const deps = (job.spec.after ?? []).map((d) => `${d.job_id}:${d.on}`).join(", ");
  return dependencyFailed(
    {
      exit_code: null,
      signal: null,
      finished_at: new Date(nowMs).toISOString(),
      started_at: null,
      descendants_alive: false,
    },
    deps || null,
  );
}
