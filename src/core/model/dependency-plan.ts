// What a launch must do about a job's dependencies (--after): the parents the target waits for, or the condition
// that can no longer hold. dependencies/dependency-rules.ts plans it; each backend carries it out.
import type { Dependency } from "./job.ts";

/** A parent still active at submit: the target waits for it, in its job directory there. */
export interface DependencyWait extends Dependency {
  /** The parent's job directory on the target (local: job_dir; SSH: its remote directory). */
  dir: string;
  /** The parent has retries: `dir` is its first attempt's, and the target waits for its `final` record there. */
  final?: boolean;
  /** Slurm: the parent's scheduler job ID, for a native --dependency. */
  scheduler_id?: string;
  /**
   * Slurm, :failed or :any on a parent with retries: no native dependency (Slurm's afternotok/afterany would start the
   * child after an earlier attempt); the child is submitted held and a client releases or ends it (heldChildNow).
   */
  hold?: boolean;
}

/** What the launch must do about a job's dependencies. */
export interface DependencyPlan {
  /** Parents still active: the job is held until each condition holds. */
  waits: DependencyWait[];
  /** The first condition that can no longer hold (JOB_ID:ON): the job ends dependency_failed and never runs. */
  failed: string | null;
}
