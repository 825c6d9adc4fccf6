// Job dependencies (`--after JOB[:ok|:any|:failed]`, MCP `after`): their syntax, the same-target rule, and what a
// parent's state means for a child at submit. The wait itself happens on the target (wrapper.sh "Dependencies").

import type { CapabilitiesOf } from "../backend/backend.ts";
import { remoteDirOf, schedulerJobIdOf } from "../model/backend-id.ts";
import type { DependencyPlan } from "../model/dependency-plan.ts";
import { AwaitlessError, hint, invalid } from "../model/errors.ts";
import type { AfterCondition, BackendId, Dependency, Job, JobSpec, JobState } from "../model/job.ts";
import { isTerminal } from "../model/job.ts";
import { attemptOf, attemptSuffix, firstAttemptDir } from "../retries/retry-policy.ts";
import { didYouMean } from "../util/nearest-name.ts";

const MAX_PARENTS = 64;
const AFTER_RE = /^(job_[0-9A-Za-z]+)(?::(ok|any|failed))?$/;
const CONDITIONS: readonly AfterCondition[] = ["ok", "any", "failed"];

/** The syntax of `after` entries: "JOB_ID[:ok|any|failed]" (default ok); at most 64, each parent once. */
export function parseAfter(given: unknown): Dependency[] {
  if (given === undefined) return [];
  if (!Array.isArray(given)) throw badAfter(JSON.stringify(given));
  if (given.length > MAX_PARENTS) {
    throw invalid(
      `${given.length} dependencies given; at most ${MAX_PARENTS}`,
      hint("after_fewer_parents", { max: MAX_PARENTS }),
    );
  }
  const out: Dependency[] = [];
  for (const entry of given) {
    const m = typeof entry === "string" ? AFTER_RE.exec(entry) : null;
    if (!m) throw badAfter(typeof entry === "string" ? entry : JSON.stringify(entry));
    const dep: Dependency = { job_id: m[1]!, on: (m[2] ?? "ok") as AfterCondition };
    const same = out.find((d) => d.job_id === dep.job_id);
    if (same && same.on !== dep.on) {
      throw invalid(
        `job ${dep.job_id} is given twice as a dependency, as :${same.on} and :${dep.on}`,
        hint("after_parent_once"),
      );
    }
    if (!same) out.push(dep);
  }
  return out;
}

function badAfter(text: string): AwaitlessError {
  const cond = /^job_[0-9A-Za-z]+:(.*)$/.exec(text)?.[1];
  if (cond !== undefined) {
    return invalid(
      `bad dependency ${text}: unknown condition ${JSON.stringify(cond)}${didYouMean(cond, CONDITIONS)}, not one of ${CONDITIONS.join(", ")}`,
      hint("after_form"),
    );
  }
  return invalid(`bad dependency ${text}`, hint("after_form"));
}

/** Does a parent that ended in `state` satisfy `on`? */
export function conditionHolds(on: AfterCondition, state: JobState): boolean {
  if (on === "any") return true;
  return on === "ok" ? state === "succeeded" : state !== "succeeded";
}

function targetName(j: { backend: string; host: string | null }): string {
  return j.host === null ? "this machine (local)" : `${j.host} (${j.backend})`;
}

/**
 * Checks each parent against the child's spec (it exists, runs on the same target) and plans the launch from
 * the parents' states now: ended parents are decided here (condition met: nothing to wait for; impossible:
 * `failed`), active ones are waited for on the target. `parents` are the refreshed parent jobs; `attemptsOf` gives a
 * retried parent's ended attempts as recorded (its current attempt may have no directory or Slurm job yet).
 */
export function planDependencies(
  spec: JobSpec,
  parents: Job[],
  caps: CapabilitiesOf,
  attemptsOf: (jobId: string) => readonly { backend_id: BackendId | null }[] = () => [],
): DependencyPlan {
  const plan: DependencyPlan = { waits: [], failed: null };
  for (const dep of spec.after ?? []) {
    const parent = parents.find((p) => p.job_id === dep.job_id);
    if (!parent) {
      throw new AwaitlessError(
        "not_found",
        `no job ${dep.job_id} to depend on`,
        hint("after_parent_unknown"),
      );
    }
    if (parent.backend !== spec.backend || parent.host !== spec.host) {
      throw invalid(
        `job ${parent.job_id} runs on ${targetName(parent)}, this job on ${targetName(spec)}: a dependency must be on the same target`,
        hint("after_same_target", { job_id: parent.job_id }),
        { job_id: parent.job_id },
      );
    }
    if (isTerminal(parent.state)) {
      if (!conditionHolds(dep.on, parent.state) && plan.failed === null)
        plan.failed = `${dep.job_id}:${dep.on}`;
      continue;
    }
    const retried = parent.spec?.retry !== undefined;
    const can = caps(parent.backend);
    if (heldOn(dep, parent, caps)) {
      plan.waits.push({ ...dep, dir: firstAttemptDir(parent), final: true, hold: true });
      continue;
    }
    const recorded = attemptsOf(parent.job_id);
    const dir = waitDir(parent, can.remoteJobDir, remoteDirOf(recorded[0]?.backend_id));
    // Between attempts a Slurm parent has no job of its own: the last attempt's (ended) until the next one's launch
    // moves the dependency (redepend).
    const schedulerId =
      schedulerJobIdOf(parent.backend_id) ??
      (retried ? schedulerJobIdOf(recorded.at(-1)?.backend_id) : undefined);
    if (typeof dir !== "string" || (can.nativeDependencies && schedulerId === undefined)) {
      throw new AwaitlessError(
        "launch_failed",
        `job ${parent.job_id} is ${parent.state} and not launched yet; there is nothing to wait on`,
        hint("after_parent_launching", { job_id: parent.job_id }),
      );
    }
    plan.waits.push({
      ...dep,
      dir,
      ...(retried ? { final: true } : {}),
      ...(schedulerId !== undefined ? { scheduler_id: String(schedulerId) } : {}),
    });
  }
  return plan;
}

/**
 * Native dependencies (Slurm), a :failed or :any dependency on a parent with retries: the child is held (sbatch
 * --hold) until a client sees the parent's final end, then released or ended dependency_failed (docs/dependencies.md
 * "A parent with retries").
 */
export function heldOn(
  dep: Dependency,
  parent: Pick<Job, "backend" | "spec">,
  caps: CapabilitiesOf,
): boolean {
  return caps(parent.backend).nativeDependencies && parent.spec?.retry !== undefined && dep.on !== "ok";
}

/**
 * Where the target waits for `parent`: its job directory there (`remote`: backend_id.remote_dir, else job_dir); for a
 * parent with retries its first attempt's, where its `final` record appears once its last attempt ended (wrapper.sh
 * "Dependencies").
 */
function waitDir(parent: Job, remote: boolean, firstRemoteDir: string | undefined): string | undefined {
  const current = remote ? remoteDirOf(parent.backend_id) : parent.job_dir;
  if (!parent.spec?.retry) return current;
  if (!remote) return firstAttemptDir(parent);
  if (firstRemoteDir !== undefined) return firstRemoteDir;
  const s = attemptSuffix(attemptOf(parent));
  if (typeof current !== "string") return undefined;
  return s && current.endsWith(s) ? current.slice(0, -s.length) : current;
}
