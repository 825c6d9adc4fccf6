// Job dependencies on Slurm: parents still active become one native sbatch --dependency (both on one cluster);
// a pending reason of DependencyNeverSatisfied is reported as a fact (slurm-observe.ts; reconcile rule S2a ends it).
import type { DependencyPlan } from "../../core/dependencies.ts";

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
