// The service's glue for --after: a launch's dependency plan, and the held children of parents with retries (what
// their observation must know, their Slurm dependency moved, their release, their wake-up at a parent's end).
import type { Backend, CapabilitiesOf } from "../backend/backend.ts";
import type { DependencyPlan } from "../model/dependency-plan.ts";
import type { Job } from "../model/job.ts";
import { canonicalJson, sha256Hex } from "../results/canonical-json.ts";
import { resolveJobIdPrefix } from "../service/job-prefix.ts";
import type { ValidatedLaunch } from "../service/launch-request.ts";
import type { JobStore, StoredJob } from "../store/job-store.ts";
import { planDependencies } from "./dependency-rules.ts";
import { dependencyFailedNow, heldChildNow, parentsToLookAt, slurmWaitsNow } from "./retried-parents.ts";

export interface DependencyDeps {
  store: JobStore;
  backendFor(job: Pick<Job, "backend"> & { backend_id?: Job["backend_id"] }): Backend;
  refresh(jobId: string): Promise<StoredJob>;
  capabilitiesOf: CapabilitiesOf;
}

export class JobDependencies {
  /** Held Slurm children whose dependency this process moved, and to what (redepend). */
  private readonly redepended = new Map<string, string>();
  /** Held Slurm children this process released (heldChildNow; once is enough). */
  private readonly released = new Set<string>();
  constructor(private readonly deps: DependencyDeps) {}

  private get(id: string): StoredJob | undefined {
    return this.deps.store.get(id) ?? undefined;
  }

  /**
   * The launch's dependencies: prefixes resolved to full IDs (the spec and its fingerprint then name them), each
   * parent refreshed and checked for the same target; undefined when the job has none.
   */
  async plan(v: ValidatedLaunch): Promise<DependencyPlan | undefined> {
    const deps = v.spec.after;
    if (!deps || deps.length === 0) return undefined;
    const store = this.deps.store;
    const resolved = deps.map((d) => ({ ...d, job_id: resolveJobIdPrefix(store, d.job_id) }));
    v.spec = { ...v.spec, after: resolved };
    v.fingerprint = sha256Hex(canonicalJson(v.spec));
    const parents: StoredJob[] = [];
    for (const d of resolved) {
      const p = store.get(d.job_id);
      // Only a parent on this job's target is looked at; planDependencies refuses the others.
      const same = p && p.backend === v.spec.backend && p.host === v.spec.host;
      if (p) parents.push(same ? await this.deps.refresh(d.job_id) : p);
    }
    return planDependencies(v.spec, parents, this.deps.capabilitiesOf, (id) => store.attempts.list(id));
  }

  /** Does `job` wait for a parent with retries (that parent's attempts and end need the child's reader)? */
  waitsOnRetried(job: StoredJob): boolean {
    return parentsToLookAt(job, (id) => this.get(id)).length > 0;
  }

  /**
   * What an observation of `job` must know: it waits for a parent with retries and no parent has failed its condition,
   * so Slurm's "never satisfied" names an earlier attempt (or a view older than the move to the current one).
   */
  lookOf(job: StoredJob): { parentMayRetry?: boolean } {
    const get = (id: string) => this.get(id);
    return this.waitsOnRetried(job) && !dependencyFailedNow(job, get) ? { parentMayRetry: true } : {};
  }

  /** Points a held Slurm child's native dependency at its parents' current Slurm jobs (slurmWaitsNow). */
  async redepend(child: StoredJob): Promise<void> {
    const backend = this.deps.backendFor(child);
    const waits = slurmWaitsNow(child, (id) => this.get(id), this.deps.capabilitiesOf);
    if (!backend.redepend || !waits) return;
    // Once per dependency and process: a poll round's view may show "never satisfied" a while after the move.
    const key = waits.map((w) => `${w.on}:${w.scheduler_id}`).join(",");
    if (this.redepended.get(child.job_id) === key) return;
    try {
      await backend.redepend(child, waits);
      this.redepended.set(child.job_id, key);
    } catch {
      // the next look at the child tries again
    }
  }

  /** A Slurm attempt is a new Slurm job: the held children's afterok moves to it (native dependencies only). */
  async redependChildren(parent: Pick<Job, "job_id" | "backend">): Promise<void> {
    if (!this.deps.capabilitiesOf(parent.backend).nativeDependencies) return;
    for (const d of this.deps.store.dependentsOf(parent.job_id)) {
      const child = this.deps.store.get(d.job_id);
      if (child && this.waitsOnRetried(child)) await this.redepend(child);
    }
  }

  /** A Slurm parent with retries ended: its held children are released or ended now, not at their next reader. */
  async wakeHeld(parent: Job): Promise<void> {
    const get = (id: string) => this.get(id);
    for (const d of this.deps.store.dependentsOf(parent.job_id)) {
      const child = this.deps.store.get(d.job_id);
      const now = child ? heldChildNow(child, get, this.deps.capabilitiesOf) : null;
      if (now === "release" || now === "failed") await this.deps.refresh(d.job_id).catch(() => undefined);
    }
  }

  /** Releases a held Slurm child whose parents with retries all ended as its conditions ask (heldChildNow). */
  async releaseHeld(child: StoredJob): Promise<void> {
    const backend = this.deps.backendFor(child);
    if (!backend.release || this.released.has(child.job_id)) return;
    try {
      await backend.release(child);
      this.released.add(child.job_id);
    } catch {
      // the next look at the child tries again
    }
  }
}
