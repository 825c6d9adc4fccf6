// Job arrays over the job service: one array row, each task an ordinary job (its own directory, result, idempotency)
// in the array's private queue of concurrency %N; wait, status, cancel and task addresses (`JOB_ID.7`) on arrays.
import { resolve } from "node:path";
import type {
  ArrayCancelResponse,
  ArrayEntry,
  ArrayListFilter,
  ArrayProgress,
  ArraySubmitResponse,
  ArrayTaskView,
  ArrayView,
  ArrayWaitResponse,
} from "../model/array-views.ts";
import { arrayState } from "../model/array-views.ts";
import { AwaitlessError, invalid } from "../model/errors.ts";
import { isJobId, newJobId } from "../model/ids.ts";
import { isTerminal, type JobState } from "../model/job.ts";
import type { ArrayApi, JobServiceApi, JobStatus, LaunchRequest, WaitOptions } from "../model/service-api.ts";
import { canonicalJson } from "../results/canonical-json.ts";
import { type LaunchDefaults, resolveTarget } from "../service/launch-request.ts";
import type { ArrayRow } from "../store/array-table.ts";
import { type JobStore, nowIso } from "../store/job-store.ts";
import { targetOf } from "../store/queue-table.ts";
import { type ArraySpec, parseArraySpec, parseTaskAddress } from "./array-spec.ts";

const FAILED: readonly JobState[] = ["failed", "timed_out", "lost"];

/** What arrays need of the job service beyond its surface: one backend submission and one cancel for many tasks. */
export interface ArrayTaskLauncher {
  /** Refuses a launch request as submit would (its fields, target and dependencies), reserving nothing. */
  checkLaunch(req: LaunchRequest): Promise<void>;
  launchArrayTasks(
    reqs: { req: LaunchRequest; index: number }[],
    array: { arrayId: string; indices: readonly number[]; throttle: number },
  ): Promise<string[]>;
  cancelMany(jobIds: string[], gracePeriodSeconds?: number): Promise<number>;
}

export class ArrayService implements ArrayApi {
  constructor(
    private readonly store: JobStore,
    private readonly jobs: JobServiceApi & ArrayTaskLauncher,
    private readonly defaults: Pick<
      LaunchDefaults,
      "backend" | "host" | "hostBackends" | "cwd" | "capabilitiesOf"
    >,
  ) {}

  /** Is this full ID an array's? */
  isArray(id: string): boolean {
    return isJobId(id) && this.store.arrays.get(id) !== null;
  }

  /**
   * The CLI's job argument with arrays: `ARRAY.7` → that task's job ID; an array's ID or unique prefix → the array's
   * ID; anything else → the job service's resolution (a job ID or prefix).
   */
  resolve(text: string): { kind: "array"; id: string } | { kind: "job"; id: string } {
    const bracket = /^(.+)\[(\d+)\]$/.exec(text);
    if (bracket) {
      throw invalid(
        `${JSON.stringify(text)} is not a task address: a task is ARRAY_ID.INDEX`,
        `write ${bracket[1]}.${bracket[2]} (a dot: brackets are glob characters in shells)`,
      );
    }
    const task = parseTaskAddress(text);
    if (task) return { kind: "job", id: this.taskJobId(this.resolveArrayId(task.arrayId), task.index) };
    if (this.isArray(text)) return { kind: "array", id: text };
    const arrays = text.length >= 5 && !isJobId(text) ? this.store.arrays.idsWithPrefix(text, 2) : [];
    if (arrays.length === 1) {
      // an array's ID shares its time prefix with its first tasks' IDs: a prefix of both names neither
      let job: string | undefined;
      try {
        job = this.jobs.resolveJobId(text);
      } catch {
        return { kind: "array", id: arrays[0]! };
      }
      throw ambiguous(text, [arrays[0]!, job]);
    }
    return { kind: "job", id: this.jobs.resolveJobId(text) };
  }

  private resolveArrayId(text: string): string {
    if (this.isArray(text)) return text;
    const found = text.length >= 5 ? this.store.arrays.idsWithPrefix(text, 2) : [];
    if (found.length > 1) throw ambiguous(text, found);
    if (found.length === 1) return found[0]!;
    throw new AwaitlessError(
      "not_found",
      `no array ${text}`,
      "a task is addressed as ARRAY_ID.INDEX, where ARRAY_ID is what submitting the array printed",
    );
  }

  private taskJobId(arrayId: string, index: number): string {
    const a = this.store.arrays.get(arrayId)!;
    const t = this.store.arrays.tasksOf(arrayId).find((x) => x.index === index);
    if (t) return t.job_id;
    throw new AwaitlessError(
      "not_found",
      a.indices.includes(index)
        ? `task ${index} of array ${arrayId} was never launched (its submit stopped part-way)`
        : `array ${arrayId} has no task ${index} (its indices: ${a.spec_text.split("%")[0]})`,
      a.indices.includes(index)
        ? "submit the array again with the same client_request_id to launch the rest"
        : "use one of the array's indices",
    );
  }

  /** The array a job is a task of, as `ARRAY_ID.INDEX`; undefined for other jobs. */
  taskAddress(jobId: string): string | undefined {
    const t = this.store.arrays.taskOfJob(jobId);
    return t ? `${t.array_id}.${t.index}` : undefined;
  }

  /** Launches every task of the array (exactly once per index: each task's client_request_id is derived). */
  async submit(req: LaunchRequest, arrayText: string): Promise<ArraySubmitResponse> {
    const spec = parseArraySpec(arrayText);
    if (req.queue !== undefined) {
      throw invalid(
        `an array was given a queue (${req.queue}): its tasks run in the array's own queue`,
        "leave the queue out: the array's %N bounds how many of its tasks run at once",
      );
    }
    const target = resolveTarget(req, this.defaults);
    const can = this.defaults.capabilitiesOf(target.backend);
    // stored as asked, with its directory resolved (a replay from elsewhere launches the same) and no secret values
    const { secret_values: secrets, ...rest } = req;
    const asked: LaunchRequest = {
      ...rest,
      ...(can.runsHere ? { cwd: resolve(this.defaults.cwd, req.cwd ?? ".") } : {}),
      allow_duplicate: true,
    };
    let a = req.client_request_id ? this.store.arrays.byRequestId(req.client_request_id) : null;
    let replay = a !== null;
    if (
      a &&
      canonicalJson({ r: a.request, i: a.indices, t: a.throttle }) !==
        canonicalJson({ r: asked, i: spec.indices, t: spec.throttle })
    ) {
      throw new AwaitlessError(
        "idempotency_conflict",
        `client_request_id ${req.client_request_id} was already used for array ${a.array_id} with different arguments`,
        "use a new client_request_id for a different array",
        { job_id: a.array_id },
      );
    }
    if (!a) {
      // every task is this request with its index: refused here, before the array exists, not part-way through it
      await this.jobs.checkLaunch({ ...asked, ...(secrets ? { secret_values: secrets } : {}) });
      const id = newJobId();
      const row: ArrayRow = {
        array_id: id,
        client_request_id: req.client_request_id ?? null,
        request: asked,
        spec_text: arrayText.trim(),
        indices: spec.indices,
        throttle: spec.throttle,
        backend: target.backend,
        host: target.host,
        // on Slurm the array is one sbatch --array (Slurm's own %N), not a queue of ours
        queue: can.nativeArrays ? null : `array.${id}`,
        created_at: nowIso(),
      };
      if (!this.store.arrays.insert(row)) {
        a = this.store.arrays.byRequestId(req.client_request_id!)!;
        replay = true;
      } else {
        if (row.queue !== null) this.store.queues.create(row.queue, targetOf(row.host), row.throttle);
        a = row;
      }
    }
    await this.launchMissing(a, spec, secrets);
    return { ...(await this.view(a)), idempotent_replay: replay };
  }

  private async launchMissing(a: ArrayRow, spec: ArraySpec, secrets?: Record<string, string>): Promise<void> {
    const have = new Set(this.store.arrays.tasksOf(a.array_id).map((t) => t.index));
    const base = a.client_request_id ?? a.array_id;
    const taskReq = (index: number): LaunchRequest => ({
      ...a.request,
      ...(a.queue !== null ? { queue: a.queue } : {}),
      env: {
        ...(a.request.env ?? {}),
        AWAITLESS_ARRAY_ID: a.array_id,
        AWAITLESS_ARRAY_INDEX: String(index),
      },
      client_request_id: `${base}.${index}`,
      ...(secrets ? { secret_values: secrets } : {}),
    });
    if (this.defaults.capabilitiesOf(a.backend).nativeArrays) {
      // one sbatch --array for the tasks not recorded yet (a task reserved by a dead submit is resumed, never doubled)
      const missing = spec.indices.filter((i) => !have.has(i));
      if (missing.length === 0) return;
      const ids = await this.jobs.launchArrayTasks(
        missing.map((index) => ({ req: taskReq(index), index })),
        { arrayId: a.array_id, indices: spec.indices, throttle: spec.throttle },
      );
      for (const [n, index] of missing.entries()) this.store.arrays.addTask(a.array_id, index, ids[n]!);
      return;
    }
    for (const index of spec.indices) {
      if (have.has(index)) continue;
      const r = await this.jobs.submit(taskReq(index));
      this.store.arrays.addTask(a.array_id, index, r.job_id);
    }
  }

  private async taskViews(a: ArrayRow): Promise<ArrayTaskView[]> {
    const out: ArrayTaskView[] = [];
    for (const t of this.store.arrays.tasksOf(a.array_id)) {
      // a finished task gc removed is no longer shown (removed_indices)
      if (!this.store.get(t.job_id)) continue;
      const s = await this.jobs.status(t.job_id);
      out.push({
        index: t.index,
        job_id: t.job_id,
        state: s.state,
        exit_code: s.exit_code,
        reason: s.reason,
      });
    }
    return out;
  }

  private async view(a: ArrayRow, tasks?: ArrayTaskView[]): Promise<ArrayView> {
    const ts = tasks ?? (await this.taskViews(a));
    const counts: Partial<Record<JobState, number>> = {};
    for (const t of ts) counts[t.state] = (counts[t.state] ?? 0) + 1;
    const rows = this.store.arrays.tasksOf(a.array_id);
    const launched = new Set(rows.map((t) => t.index));
    const unlaunched = a.indices.filter((i) => !launched.has(i));
    const shown = new Set(ts.map((t) => t.index));
    const removed = rows.filter((t) => !shown.has(t.index)).map((t) => t.index);
    return {
      job_id: a.array_id,
      array: a.spec_text,
      throttle: a.throttle,
      name: a.request.name ?? null,
      backend: a.backend,
      host: a.host,
      argv: a.request.argv,
      created_at: a.created_at,
      state: arrayState(ts, removed.length > 0 && removed.length === rows.length && unlaunched.length === 0),
      tasks: a.indices.length,
      counts,
      failed_indices: ts.filter((t) => FAILED.includes(t.state)).map((t) => t.index),
      cancelled_indices: ts.filter((t) => t.state === "cancelled").map((t) => t.index),
      ...(unlaunched.length > 0 ? { unlaunched_indices: unlaunched } : {}),
      ...(removed.length > 0 ? { removed_indices: removed } : {}),
    };
  }

  private row(arrayId: string): ArrayRow {
    const a = this.store.arrays.get(arrayId);
    if (!a)
      throw new AwaitlessError(
        "not_found",
        `no array ${arrayId}`,
        "give the ID submitting the array printed",
      );
    return a;
  }

  async status(arrayId: string): Promise<ArrayView & { task_list: ArrayTaskView[] }> {
    const a = this.row(arrayId);
    const ts = await this.taskViews(a);
    return { ...(await this.view(a, ts)), task_list: ts };
  }

  /** Waits until every task ended (or the timeout): one wait per task in index order, within one deadline. */
  async wait(arrayId: string, opts: WaitOptions): Promise<ArrayWaitResponse> {
    const a = this.row(arrayId);
    const start = Date.now();
    const deadline = opts.timeoutMs === null ? null : start + opts.timeoutMs;
    for (const t of this.store.arrays.tasksOf(a.array_id)) {
      if (!this.store.get(t.job_id)) continue;
      const left = deadline === null ? null : Math.max(0, deadline - Date.now());
      const w = await this.jobs.wait(t.job_id, {
        timeoutMs: left,
        untracked: true,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onProgress ? { onProgress: (m: string) => opts.onProgress!(`task ${t.index}: ${m}`) } : {}),
        ...(opts.progressIntervalMs !== undefined ? { progressIntervalMs: opts.progressIntervalMs } : {}),
      });
      if (w.wait_state !== "complete") break;
    }
    const v = await this.view(a);
    const done = isTerminal(v.state) && v.unlaunched_indices === undefined;
    if (done) this.store.queues.removeEndedArrayQueues();
    return {
      ...v,
      job_state: v.state,
      wait_state: done ? "complete" : "client_timeout",
      delivery_state: done ? "delivered" : "pending",
      waited_seconds: Math.round(Date.now() - start) / 1000,
    };
  }

  /**
   * Cancels every task not ended: the waiting ones first (so no slot they free admits another), then the running
   * ones, then once more any that started meanwhile.
   */
  async cancel(arrayId: string, gracePeriodSeconds?: number): Promise<ArrayCancelResponse> {
    const a = this.row(arrayId);
    let requested = 0;
    let already = 0;
    const native = this.defaults.capabilitiesOf(a.backend).nativeArrays;
    if (native) {
      // one scancel per sbatch of the array: Slurm drops the pending tasks, the wrapper stops the running ones
      const ts = await this.taskViews(a);
      const active = ts.filter((t) => !isTerminal(t.state));
      already = ts.length - active.length;
      requested = await this.jobs.cancelMany(
        active.map((t) => t.job_id),
        gracePeriodSeconds,
      );
    }
    for (let pass = 0; pass < (native ? 0 : 3); pass++) {
      const ts = await this.taskViews(a);
      const active = ts.filter((t) => !isTerminal(t.state));
      if (pass === 0) already = ts.length - active.length;
      if (active.length === 0) break;
      const waiting = active.filter((t) => t.state === "queued");
      const rest = active.filter((t) => t.state !== "queued");
      for (const group of [waiting, rest]) {
        const answers = await Promise.all(group.map((t) => this.jobs.cancel(t.job_id, gracePeriodSeconds)));
        requested += answers.filter((r) => r.cancel_requested).length;
      }
    }
    const v = await this.view(a);
    return {
      job_id: a.array_id,
      job_state: v.state,
      cancel_requested: requested,
      already_terminal: already,
      array: v,
    };
  }

  /** The task job IDs of an array (for the completion feed), or the ID itself for a job. */
  expand(id: string): string[] {
    if (!this.isArray(id)) return [id];
    return this.store.arrays
      .tasksOf(id)
      .map((t) => t.job_id)
      .filter((j) => this.store.get(j) !== null);
  }

  /** The completion feed's IDs: each array's ID replaced by its tasks' (at most `max` in all, said clearly). */
  expandAll(ids: string[], max: number): string[] {
    const out = ids.flatMap((id) => this.expand(id));
    const arrays = ids.filter((id) => this.isArray(id));
    if (arrays.length > 0 && out.length > max) {
      throw invalid(
        `the completion feed takes at most ${max} job IDs, and ${arrays.join(", ")} stand${arrays.length === 1 ? "s" : ""} for ${out.length} with the other IDs`,
        "wait on the array instead (its answer counts every task and lists the failed indices), or pass fewer task IDs",
      );
    }
    return out;
  }

  /** The progress of every array these jobs are tasks of (counted in SQL: store/array-counts.ts). */
  progress(jobIds: string[]): ArrayProgress[] {
    return this.store.arrays.progress(jobIds);
  }

  list(filter: ArrayListFilter): ArrayEntry[] {
    return this.store.arrays.list(filter);
  }

  activeTasks(arrayIds: string[]): string[] {
    return this.store.arrays.activeTaskIds(arrayIds);
  }

  /** Adds `array_task` (ARRAY_ID.INDEX) to the statuses of array tasks. */
  annotate<T extends JobStatus>(statuses: T[]): (T & { array_task?: string })[] {
    return statuses.map((s) => {
      const at = this.taskAddress(s.job_id);
      return at ? { ...s, array_task: at } : s;
    });
  }
}

function ambiguous(prefix: string, ids: string[]): AwaitlessError {
  return invalid(
    `job ID prefix ${prefix} is ambiguous: ${ids.join(", ")}`,
    "give more characters of the ID (arrays and their first tasks share a long prefix)",
  );
}
