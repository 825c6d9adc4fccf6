// Owns a job array on Slurm: one `sbatch --array=IDS%N` per chunk (split only at the cluster's MaxArraySize), the
// links by which each Slurm task finds its own task's job directory, adoption by the chunk's tag, one scancel per chunk.
import type { ArrayLaunch, ArrayTaskLaunch } from "../../core/backend/backend.ts";
import { type SlurmBackendId, slurmIdOf } from "../../core/model/backend-id.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { Job } from "../../core/model/job.ts";
import { HEARTBEAT_SECONDS } from "../../core/model/liveness.ts";
import { jobSpecText, writeLocalSpec } from "../job-spec.ts";
import { renderSbatchScript, slurmJobName } from "./sbatch-script.ts";
import { slurmDependency } from "./slurm-dependency.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { clusterDirIn, sbatchOptionsFor } from "./slurm-launch-parts.ts";
import {
  arrayIndexText,
  arrayTaskOf,
  findTaggedJobs,
  parseSacct,
  parseSqueue,
  sacctMineArgs,
  squeueByNameArgs,
} from "./slurm-queries.ts";
import { submitBatch } from "./slurm-submit.ts";

/** One sbatch of an array: our indices from `base` on, each run by the Slurm task ID `index - base`. */
export interface ArrayChunk {
  /** 0, 1, …: the chunk's place (its tag is the array's ID, then `ARRAY_ID.k`). */
  k: number;
  base: number;
  indices: number[];
}

/**
 * Splits sorted indices into chunks whose Slurm task IDs stay below MaxArraySize. One chunk (task ID = index) whenever
 * every index is below it; past it each chunk starts at its first index (task ID 0).
 */
export function arrayChunks(indices: readonly number[], maxArraySize: number): ArrayChunk[] {
  const max = Math.max(1, maxArraySize);
  const chunks: ArrayChunk[] = [];
  let cur: ArrayChunk | undefined;
  for (const i of indices) {
    if (cur && i - cur.base < max) {
      cur.indices.push(i);
      continue;
    }
    cur = { k: chunks.length, base: cur === undefined && i < max ? 0 : i, indices: [i] };
    chunks.push(cur);
  }
  return chunks;
}

/** The tag (Slurm job name suffix and comment) of an array's chunk k. */
export function chunkTag(arrayId: string, k: number): string {
  return k === 0 ? arrayId : `${arrayId}.${k}`;
}

export interface ArrayContext {
  h: SlurmHost;
  tickSeconds: number;
  heartbeatSeconds?: number;
  adoptWindowMs: number;
}

/**
 * Slurm task IDs (`123_4`) tagged with a chunk's tag: squeue (pending and running tasks, one line each with --array)
 * and the user's accounting since `since` (ended tasks), both, since a chunk may be partly ended.
 */
export async function findArrayTasks(
  h: SlurmHost,
  tag: string,
  jobName: string | undefined,
  since: Date,
): Promise<string[]> {
  const timeoutMs = h.settings.callTimeoutMs;
  const [q, a] = await Promise.all([
    h.runner.exec(squeueByNameArgs(slurmJobName(tag, jobName)), { timeoutMs }),
    h.runner.exec(sacctMineArgs(since), { timeoutMs }),
  ]);
  if (q.code !== 0 || a.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `could not look up the Slurm array tagged ${tag} on ${h.name}: ${(q.stderr || a.stderr).trim().slice(0, 300)}`,
      "the Slurm controller or accounting is not answering; submit again with the same client_request_id later",
      { host: h.name },
    );
  }
  const rows = [...parseSqueue(q.stdout), ...parseSacct(a.stdout).filter((r) => r.step === undefined)];
  return findTaggedJobs(rows, tag).filter((id) => arrayTaskOf(id) !== undefined);
}

/** Launches the given tasks: spec files and links first, then one sbatch per chunk that has any of them. */
export async function launchSlurmArray(
  ctx: ArrayContext,
  tasks: ArrayTaskLaunch[],
  array: ArrayLaunch,
): Promise<(SlurmBackendId | Error)[]> {
  const { h } = ctx;
  const first = tasks[0];
  if (first === undefined) return [];
  const prepared = await h.prepare();
  const job0 = first.input.job;
  const cwd = h.resolveCwd(job0.spec.cwd, prepared.home);
  const options = sbatchOptionsFor(h, job0, first.input.graceSeconds);
  const chunks = arrayChunks(array.indices, await h.maxArraySize());
  const chunkOf = new Map<number, ArrayChunk>();
  for (const c of chunks) for (const i of c.indices) chunkOf.set(i, c);
  const dirOf = (job: Job) => clusterDirIn(prepared.root, job);
  const out = new Map<number, SlurmBackendId | Error>();
  const submittedAt = new Date();
  // every task's files before any sbatch: a task that starts at once finds its spec
  for (const t of tasks) {
    const job = t.input.job;
    const text = jobSpecText(job, t.input, {
      cwd,
      tickSeconds: ctx.tickSeconds,
      heartbeatSeconds: ctx.heartbeatSeconds ?? HEARTBEAT_SECONDS,
      scheduler: "slurm",
    });
    writeLocalSpec(job.job_dir, text);
    await h.runner.mkdirp(dirOf(job), 0o700);
    await h.runner.writeFile(`${dirOf(job)}/spec.sh`, text, 0o600);
  }
  // an earlier submit of this array may have got its sbatch through: those tasks are adopted, not submitted again
  const found = new Set<string>();
  const chunkJob = new Map<number, string>();
  const pendingChunks = [...new Set(tasks.map((t) => chunkOf.get(t.index)!))].sort((a, b) => a.k - b.k);
  if (array.resumed) {
    const last = pendingChunks[pendingChunks.length - 1]!.k;
    for (const c of chunks) {
      if (c.k > last) break;
      for (const id of await findArrayTasks(
        h,
        chunkTag(array.arrayId, c.k),
        job0.name ?? undefined,
        new Date(Date.parse(job0.created_at)),
      )) {
        found.add(id);
        chunkJob.set(c.k, arrayTaskOf(id)!.arrayJobId);
      }
    }
  }
  const throttled = array.throttle < array.indices.length;
  for (const c of pendingChunks) {
    const mine = tasks.filter((t) => chunkOf.get(t.index) === c);
    const tag = chunkTag(array.arrayId, c.k);
    const chunkDir = `${prepared.root}/arrays/${array.arrayId}/${c.k}`;
    const base = (t: ArrayTaskLaunch): SlurmBackendId => ({
      remote_dir: dirOf(t.input.job),
      cwd,
      submitted_at: submittedAt.toISOString(),
      array_tag: tag,
      array_task: t.index - c.base,
    });
    const known = chunkJob.get(c.k);
    const toSubmit: ArrayTaskLaunch[] = [];
    for (const t of mine) {
      const id = known === undefined ? undefined : `${known}_${t.index - c.base}`;
      if (id !== undefined && found.has(id))
        out.set(t.index, { ...base(t), slurm_job_id: id, array_job_id: known, adopted: true });
      else toSubmit.push(t);
    }
    if (toSubmit.length === 0) continue;
    try {
      // each Slurm task ID links to its task's job directory (the batch script and --output follow the link)
      const links = toSubmit.map((t) => `${t.index - c.base} ${dirOf(t.input.job)}`).join("\n");
      const r = await h.runner.exec(["sh", "-c", LINK_SCRIPT, "sh", chunkDir], {
        stdin: `${links}\n`,
        timeoutMs: h.settings.callTimeoutMs,
      });
      if (r.code !== 0)
        throw new AwaitlessError(
          "launch_failed",
          `could not link the array's task directories in ${chunkDir} on ${h.name}: ${r.stderr.trim().slice(0, 300)}`,
          `check that slurm_job_dir in [hosts.${h.name}] is writable`,
        );
      // across chunks %N holds for the whole array: chunk k starts once every task of chunk k-1 ended
      const previous = chunkJob.get(c.k - 1);
      const dependency = [
        slurmDependency(first.input.after),
        throttled && previous !== undefined ? `afterany:${previous}` : undefined,
      ].filter((d) => d !== undefined);
      const script = renderSbatchScript({
        jobId: tag,
        ...(job0.name ? { jobName: job0.name } : {}),
        slurmJobDir: chunkDir,
        wrapperPath: prepared.wrapperPath,
        options,
        array: {
          taskIds: arrayIndexText(toSubmit.map((t) => t.index - c.base)),
          ...(throttled ? { throttle: array.throttle } : {}),
        },
        ...(dependency.length > 0 ? { dependency: dependency.join(",") } : {}),
      });
      const sub = await submitBatch(
        h.runner,
        script,
        { jobId: tag, ...(job0.name ? { jobName: job0.name } : {}) },
        {
          timeoutMs: h.settings.callTimeoutMs,
          adoptWindowMs: ctx.adoptWindowMs,
          minPauseMs: h.poller.floorMs,
          since: submittedAt,
        },
      );
      const jobIdOf = sub.slurmJobId === undefined ? undefined : sub.slurmJobId.split("_")[0]!;
      if (jobIdOf !== undefined) chunkJob.set(c.k, jobIdOf);
      for (const t of toSubmit) {
        const id: SlurmBackendId = base(t);
        if (jobIdOf !== undefined) {
          id.slurm_job_id = `${jobIdOf}_${t.index - c.base}`;
          id.array_job_id = jobIdOf;
        }
        if (sub.adopted) id.adopted = true;
        if (sub.unconfirmed !== undefined) id.submit_unconfirmed = sub.unconfirmed;
        out.set(t.index, id);
      }
      if (jobIdOf === undefined && throttled) {
        // without its ID no later chunk can wait for this one: they stay unsubmitted rather than break %N
        const rest = pendingChunks.filter((x) => x.k > c.k);
        for (const x of rest)
          for (const t of tasks.filter((tt) => chunkOf.get(tt.index) === x))
            out.set(
              t.index,
              new AwaitlessError(
                "launch_failed",
                `array chunk ${c.k} was not confirmed by sbatch, so chunk ${x.k} (which must wait for it) was not submitted`,
                "submit the remaining indices as a new array once the cluster answers",
              ),
            );
        break;
      }
    } catch (e) {
      for (const t of toSubmit) out.set(t.index, e instanceof Error ? e : new Error(String(e)));
    }
  }
  return tasks.map((t) => out.get(t.index) ?? new Error(`array task ${t.index} was not submitted`));
}

// Reads `TASK_ID DIR` lines; makes the chunk directory (0700) and one link per task ID to its task's job directory.
const LINK_SCRIPT = `umask 077
mkdir -p "$1" || exit 1
while read -r awl_t awl_d; do
  [ -n "$awl_t" ] || continue
  ln -sfn "$awl_d" "$1/$awl_t" || exit 1
done`;

/** scancel for many tasks: each chunk by its own Slurm job ID once, other tasks one by one, in one call. */
export function scancelTargets(jobs: readonly Job[]): string[] {
  const whole = new Set<string>();
  const ids: string[] = [];
  for (const j of jobs) {
    const bid: SlurmBackendId = slurmIdOf(j) ?? {};
    if (bid.slurm_job_id === undefined) continue;
    if (bid.array_job_id !== undefined) whole.add(bid.array_job_id);
    else ids.push(bid.slurm_job_id);
  }
  return [...whole, ...ids];
}

/** Cancel files in every task's directory (the wrapper's TERM, then KILL after the grace), then one scancel. */
export async function scancelArray(
  h: SlurmHost,
  jobs: readonly Job[],
  graceSeconds: number,
  scancelled: Set<string>,
): Promise<void> {
  const grace = `${Math.max(0, Math.ceil(graceSeconds))}\n`;
  for (const j of jobs) {
    const dir = slurmIdOf(j)?.remote_dir;
    if (dir) await h.runner.writeFile(`${dir}/cancel`, grace, 0o600).catch(() => undefined);
  }
  const targets = scancelTargets(jobs);
  if (targets.length === 0) return;
  const r = await h.runner.exec(["scancel", ...targets], { timeoutMs: h.settings.callTimeoutMs });
  if (r.code !== 0) {
    throw new AwaitlessError(
      "connection_failed",
      `scancel ${targets.join(" ")} failed on ${h.name} (exit ${r.code}): ${r.stderr.trim().slice(0, 300)}`,
      {
        cli: "the cancel request is recorded; run `awaitless cancel` again once Slurm answers",
        mcp: "The cancel request is recorded; call cancel_job again once Slurm answers.",
      },
      { host: h.name, scheduler_command: "scancel", scheduler_message: r.stderr.slice(0, 2000) },
    );
  }
  for (const j of jobs) {
    const id = slurmIdOf(j)?.slurm_job_id;
    if (id !== undefined) scancelled.add(id);
  }
}
