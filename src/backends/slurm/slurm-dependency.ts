// Job dependencies on Slurm: parents still active become one native sbatch --dependency (both on one cluster);
// a pending reason of DependencyNeverSatisfied is reported as a fact (slurm-observe.ts; reconcile rule S2a ends it).
// A :failed/:any child of a parent with retries is held instead (sbatch --hold) and released here by a client.
import type { DependencyPlan } from "../../core/model/dependency-plan.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { CommandRunner } from "./runner.ts";
import { checkDependency } from "./sbatch-script.ts";

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

/**
 * Points a pending Slurm job's dependency at other Slurm jobs (a retried parent's new attempt), or clears it ("":
 * every parent ended as its condition asks): `scontrol update JobId=ID Dependency=…`; Slurm re-evaluates it, also
 * after DependencyNeverSatisfied.
 */
export async function updateDependency(
  runner: CommandRunner,
  timeoutMs: number,
  slurmJobId: string,
  dependency: string,
): Promise<void> {
  const r = await runner.exec(
    ["scontrol", "update", `JobId=${slurmJobId}`, `Dependency=${dependency && checkDependency(dependency)}`],
    { timeoutMs },
  );
  if (r.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `scontrol update of Slurm job ${slurmJobId}'s dependency failed (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
      "the next look at the job tries again",
    );
  }
}

/** Releases a job submitted with --hold (`scontrol release ID`; a pending job that is not held is left as it is). */
export async function releaseHeld(
  runner: CommandRunner,
  timeoutMs: number,
  slurmJobId: string,
): Promise<void> {
  const r = await runner.exec(["scontrol", "release", slurmJobId], { timeoutMs });
  if (r.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `scontrol release of Slurm job ${slurmJobId} failed (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
      "the next look at the job tries again",
    );
  }
}
