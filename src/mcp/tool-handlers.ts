// What each tool does: map arguments onto JobServiceApi calls, hold where needed, shape the result.

import type { CallToolResult } from "@modelcontextprotocol/server";
import type * as v from "valibot";
import type { ArrayView } from "../core/model/array-views.ts";
import { progressWords } from "../core/model/array-views.ts";
import { isTerminal } from "../core/model/job.ts";
import {
  isDelivered,
  type JobServiceApi,
  type JobStatus,
  type LaunchRequest,
} from "../core/model/service-api.ts";
import { compactAnswer } from "./compact.ts";
import type { McpConfig } from "./config.ts";
import type { SessionFinishedJobs } from "./finished-jobs.ts";
import { assertLaunchable } from "./guards.ts";
import { type HoldContext, holdTimeoutMs, holdWithProgress, statusSentence } from "./hold.ts";
import type { JobWatch } from "./job-watch.ts";
import { boundList, leftOutNote, quotedFilter } from "./list-bounds.ts";
import { logsText } from "./logs-text.ts";
import { answerText, finishedText, pendingText } from "./result-text.ts";
import {
  answerResult,
  formatSeconds,
  isFailure,
  mcpWait,
  nextDetachedAction,
  retryWaitOf,
  toolResult,
} from "./results.ts";
import { finalToolResult, type TaskView, taskView } from "./task-view.ts";
import {
  type cancelInput,
  type completionsInput,
  type createQueueInput,
  type listInput,
  type listQueuesInput,
  type logsInput,
  type RunArgs,
  type runJobInput,
  type statusInput,
  type submitInput,
  toLaunchRequest,
  toListRequest,
  toLogsRequest,
  type waitInput,
} from "./tool-inputs.ts";

export interface ToolEnv {
  service: JobServiceApi;
  config: McpConfig;
  watch: JobWatch;
  /** The connection's finished-job notices (absent: results carry no finished_jobs). */
  finished?: SessionFinishedJobs;
  /** Aborted at the client's end of input: a held call stops holding and answers with what it has. */
  ending?: AbortSignal;
}

/** Per-call facts: the hold context and whether this request may be answered with a task handle. */
export interface CallCtx {
  hold: HoldContext;
  /** The request declared the 2026 Tasks extension in its per-request capabilities. */
  tasks: boolean;
}

export interface TaskOutcome {
  kind: "task";
  task: TaskView;
}
export type RunJobOutcome = CallToolResult | TaskOutcome;

export function isTaskOutcome(outcome: RunJobOutcome): outcome is TaskOutcome {
  return (outcome as Partial<TaskOutcome>).kind === "task";
}

/** The misuse guards; duplicate active commands are refused by the service itself (duplicate_active_job). */
async function launchGuards(_env: ToolEnv, req: LaunchRequest): Promise<void> {
  assertLaunchable(req.argv);
}

/** A launch given a shell-string `command` ran as `sh -c STRING`: its result says so (`command_form: "shell"`). */
export function markShellForm(result: CallToolResult, args: unknown): CallToolResult {
  const command = (args as { command?: unknown } | undefined)?.command;
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  // Only a launch's answer (it names its job); a refusal is `{error}` alone.
  if (typeof command !== "string" || typeof structured?.job_id !== "string") return result;
  result.structuredContent = { ...structured, command_form: "shell" };
  return result;
}

export async function runTool(env: ToolEnv, args: RunArgs, ctx: CallCtx): Promise<CallToolResult> {
  const req = toLaunchRequest(args);
  await launchGuards(env, req);
  if (args.array !== undefined) {
    const requested = (args.inline_timeout_seconds ?? env.config.inlineWindowMs / 1000) * 1000;
    return launchArray(env, req, args.array, Math.min(requested, ctx.hold.budgetMs), ctx);
  }
  const requestedMs = (args.inline_timeout_seconds ?? env.config.inlineWindowMs / 1000) * 1000;
  const inlineMs = Math.min(requestedMs, ctx.hold.budgetMs);
  const startedAt = Date.now();
  let jobId: string | undefined;
  const describe = async () =>
    jobId === undefined
      ? `waiting for the command, ${formatSeconds((Date.now() - startedAt) / 1000)} elapsed`
      : statusSentence(await env.service.status(jobId));
  const resp = await holdWithProgress(ctx.hold, describe, (hooks) =>
    env.service.run(req, inlineMs, {
      signal: hooks.signal,
      progressIntervalMs: hooks.progressIntervalMs,
      onProgress: hooks.onProgress,
    }),
  );
  jobId = resp.job_id;
  env.finished?.track(resp.job_id, req);
  if (isDelivered(resp)) env.finished?.delivered(resp.job_id);
  env.watch.watch(resp.job_id);
  const out = mcpWait(resp);
  if (out.delivery === "detached") {
    const retry = retryWaitOf(out);
    out.next_action = nextDetachedAction(out.job_id, out.job_state, retry);
    const why = retry
      ? `is ${retry}`
      : out.detach_reason === "queued"
        ? "is queued"
        : env.ending?.aborted
          ? "is still running (the client's input ended, so the call answered at once)"
          : `is still running after ${formatSeconds(inlineMs / 1000)}`;
    const now = !retry && out.status_message ? ` (now ${out.status_message})` : "";
    const head = `Job ${out.job_id} ${why}${now}; it keeps going in the background.`;
    return answerResult(out, pendingText(out, head), { jobId: out.job_id });
  }
  // The whole result is here: no link to follow (only answers still waiting on the job carry one).
  return answerResult(out, answerText(out), { isError: isFailure(out) });
}

export async function submitTool(
  env: ToolEnv,
  args: v.InferOutput<typeof submitInput>,
): Promise<CallToolResult> {
  const req = toLaunchRequest(args);
  await launchGuards(env, req);
  if (args.array !== undefined) return launchArray(env, req, args.array, null);
  const resp = await env.service.submit(req);
  env.finished?.track(resp.job_id, resp.job);
  env.watch.watch(resp.job_id);
  const next_action = nextDetachedAction(resp.job_id, resp.state, retryWaitOf(resp.job));
  const replay = resp.launch_resumed
    ? " (this request ID created it, but its first client stopped before launching it; launched now)"
    : resp.idempotent_replay
      ? " (idempotent replay: this request ID already created it)"
      : "";
  return toolResult(
    { ...resp, next_action },
    `Submitted job ${resp.job_id}, now ${resp.state}${replay}.\n${next_action}`,
    {
      jobId: resp.job_id,
    },
  );
}

/** run_job: a task handle once the job row is committed (Tasks clients), else a blocking hold. */
export async function runJobTool(
  env: ToolEnv,
  args: v.InferOutput<typeof runJobInput>,
  ctx: CallCtx,
): Promise<RunJobOutcome> {
  const req = toLaunchRequest(args);
  await launchGuards(env, req);
  if (args.array !== undefined) return launchArray(env, req, args.array, ctx.hold.budgetMs, ctx);
  const submitted = await env.service.submit(req);
  env.finished?.track(submitted.job_id, submitted.job);
  env.watch.watch(submitted.job_id);
  if (ctx.tasks) return { kind: "task", task: taskView(submitted.job, env.config) };
  return waitFor(env, submitted.job_id, undefined, ctx, true);
}

export async function waitTool(
  env: ToolEnv,
  args: v.InferOutput<typeof waitInput>,
  ctx: CallCtx,
): Promise<CallToolResult> {
  const arrays = env.service.arrays;
  if (arrays?.isArray(args.job_id))
    return waitArray(env, args.job_id, holdTimeoutMs(args.timeout_seconds, ctx.hold.budgetMs), ctx);
  return waitFor(env, taskJob(env, args.job_id), args.timeout_seconds, ctx, false);
}

async function waitFor(
  env: ToolEnv,
  jobId: string,
  timeoutSeconds: number | undefined,
  ctx: CallCtx,
  finalShape: boolean,
): Promise<CallToolResult> {
  const timeoutMs = holdTimeoutMs(timeoutSeconds, ctx.hold.budgetMs);
  const hold = () =>
    holdWithProgress(
      ctx.hold,
      async () => statusSentence(await env.service.status(jobId)),
      (hooks) => env.service.wait(jobId, { timeoutMs, ...hooks }),
    );
  const resp = env.finished ? await env.finished.holding(jobId, hold) : await hold();
  env.finished?.track(jobId);
  if (isDelivered(resp)) env.finished?.delivered(jobId);
  env.watch.watch(jobId);
  if (finalShape || isDelivered(resp)) return finalToolResult(resp);
  const out = mcpWait(resp, resp.host_unreachable ? undefined : await quietSecondsOf(env, jobId));
  return answerResult(out, answerText(out), { jobId });
}

/** How long the answer may wait for the job's status (an SSH round trip) before it goes without the offer. */
const QUIET_LOOKUP_MS = 2_000;

/** Seconds since the job's last output (since its start when it has none), for the cancel_job offer. */
async function quietSecondsOf(env: ToolEnv, jobId: string): Promise<number | undefined> {
  const status = await Promise.race([
    env.service.status(jobId).catch(() => undefined),
    Bun.sleep(QUIET_LOOKUP_MS).then(() => undefined),
  ]);
  if (status === undefined) return undefined;
  if (status.last_output_at !== null) return (Date.now() - Date.parse(status.last_output_at)) / 1000;
  return status.elapsed_seconds;
}

export async function completionsTool(
  env: ToolEnv,
  args: v.InferOutput<typeof completionsInput>,
  ctx: CallCtx,
): Promise<CallToolResult> {
  const timeoutMs = holdTimeoutMs(args.timeout_seconds, ctx.hold.budgetMs);
  // an array's ID stands for its tasks
  const ids = env.service.arrays ? env.service.arrays.expandAll(args.job_ids, 500) : args.job_ids;
  const resp = await holdWithProgress(
    ctx.hold,
    async () => `waiting for ${ids.length} job(s)`,
    (hooks) =>
      env.service.completions(ids, {
        ...(args.after_cursor !== undefined && { after_cursor: args.after_cursor }),
        ...(args.limit !== undefined && { limit: args.limit }),
        timeoutMs,
        ...hooks,
      }),
  );
  for (const id of ids) env.finished?.track(id);
  for (const c of resp.completions) env.finished?.delivered(c.job_id);
  for (const id of resp.active_job_ids) env.watch.watch(id);
  const lines = resp.completions.map((c) => finishedText(c.result));
  const next = `Call wait_for_completions with {"job_ids":${JSON.stringify(args.job_ids)},"after_cursor":"${resp.next_cursor}"} for the next ones.`;
  const head =
    resp.completions.length === 0
      ? `No job finished ${resp.wait_timed_out ? "before the wait ended (only the wait ended: no job was killed)" : "yet"}; ${resp.active_job_ids.length} still active.`
      : `${resp.completions.length} job(s) finished:\n\n${lines.join("\n\n")}\n`;
  const tail =
    resp.active_job_ids.length > 0 || resp.has_more ? `\n${next}` : "\nAll selected jobs have finished.";
  const unreachable =
    resp.unreachable_job_ids.length > 0
      ? `\nUnreachable right now: ${resp.unreachable_job_ids.join(", ")}.`
      : "";
  // Each completion's result is compact, as every wait-like result over MCP.
  const compact = {
    ...resp,
    completions: resp.completions.map((c) => ({ ...c, result: compactAnswer(c.result) })),
  };
  const structured =
    resp.active_job_ids.length > 0 || resp.has_more ? { ...compact, next_action: next } : compact;
  return toolResult(structured, head + unreachable + tail);
}

export async function statusTool(
  env: ToolEnv,
  args: v.InferOutput<typeof statusInput>,
): Promise<CallToolResult> {
  const arrays = env.service.arrays;
  if (arrays?.isArray(args.job_id)) {
    const { task_list: _t, ...a } = await arrays.status(args.job_id);
    return toolResult(
      a,
      `${arraySentence(a)}. Call wait_for_job with {"job_id":"${a.job_id}"} to wait for every task.`,
    );
  }
  const status = await env.service.status(taskJob(env, args.job_id));
  env.finished?.remember(status.job_id, status);
  // the attempt of a retried job, unless its status message already names the one it waits for
  const attempt =
    status.attempts !== undefined && !status.next_attempt_at
      ? `, attempt ${status.attempt} of ${status.attempts}`
      : "";
  const ended = [
    status.exit_code !== null ? `exit ${status.exit_code}` : "",
    status.signal ?? "",
    status.reason !== status.state ? (status.reason ?? "") : "",
  ].filter(Boolean);
  const text = isTerminal(status.state)
    ? `Job ${status.job_id} ${status.state}${ended.length ? ` (${ended.join(", ")})` : ""}${attempt}. wait_for_job returns its full result.`
    : `Job ${status.job_id}: ${statusSentence(status)}${attempt}. Call wait_for_job with {"job_id":"${status.job_id}"} to wait for it.`;
  return toolResult(status, `${text}\n${whatAndWhere(status)}`, { jobId: status.job_id });
}

export async function logsTool(env: ToolEnv, args: v.InferOutput<typeof logsInput>): Promise<CallToolResult> {
  const req = toLogsRequest(args, env.config.maxReturnBytes);
  const resp = await env.service.logs({ ...req, job_id: taskJob(env, req.job_id) });
  return toolResult(resp, logsText(req, resp), { jobId: args.job_id });
}

export async function cancelTool(
  env: ToolEnv,
  args: v.InferOutput<typeof cancelInput>,
): Promise<CallToolResult> {
  const arrays = env.service.arrays;
  if (arrays?.isArray(args.job_id)) {
    const r = await arrays.cancel(args.job_id, args.grace_period_seconds);
    return toolResult(
      r,
      `${arraySentence(r.array)}; ${r.cancel_requested} task(s) cancelled, ${r.already_terminal} had already ended.`,
    );
  }
  const resp = await env.service.cancel(taskJob(env, args.job_id), args.grace_period_seconds);
  const text =
    resp.leftover && resp.leftover.action !== "none"
      ? `Job ${resp.job_id} is ${resp.job_state} (its wrapper was killed); its command's process group: ${resp.leftover.action}: ${resp.leftover.detail}.`
      : resp.already_terminal
        ? `Job ${resp.job_id} had already finished (${resp.job_state}); nothing was signalled.`
        : `Cancellation of job ${resp.job_id} requested (now ${resp.job_state}). wait_for_job returns once it has stopped.`;
  return toolResult(resp, text, { jobId: resp.job_id });
}

function queueService(env: ToolEnv): Required<Pick<JobServiceApi, "createQueue" | "listQueues">> {
  const { createQueue, listQueues } = env.service;
  if (!createQueue || !listQueues) throw new Error("this server's job service has no named queues");
  return {
    createQueue: createQueue.bind(env.service),
    listQueues: listQueues.bind(env.service),
  };
}

export async function createQueueTool(
  env: ToolEnv,
  args: v.InferOutput<typeof createQueueInput>,
): Promise<CallToolResult> {
  const q = await queueService(env).createQueue(args.name, args.concurrency, args.host);
  const text = `${q.created ? "Created" : "Queue already exists:"} ${q.name} on ${q.target}, concurrency ${q.concurrency}. Launch into it with queue: "${q.name}".`;
  return toolResult(q, text);
}

export async function listQueuesTool(
  env: ToolEnv,
  args: v.InferOutput<typeof listQueuesInput>,
): Promise<CallToolResult> {
  const listing = await queueService(env).listQueues(args.host);
  const { queues, hidden_array_queues: hidden } = listing;
  // an array's private queue is the array's business: its progress is get_job_status of the array
  const arrays =
    hidden === 0
      ? ""
      : `\n${hidden} job array(s) active; their private queues are not listed (get_job_status with an array's ID shows its tasks).`;
  if (queues.length === 0) {
    return toolResult(listing, `No queues yet. Create one with create_queue.${arrays}`);
  }
  const lines = queues.map((q) => {
    const eta = q.eta_seconds === null ? "" : `, ETA ~${formatSeconds(q.eta_seconds)}`;
    const order = q.waiting.length ? `; waiting: ${q.waiting.map((w) => w.job_id).join(", ")}` : "";
    return `- ${q.name} on ${q.target}: ${q.running}/${q.concurrency} running, ${q.queued} queued${eta}${order}`;
  });
  return toolResult(listing, `${queues.length} queue(s):\n${lines.join("\n")}${arrays}`);
}

export async function listTool(env: ToolEnv, args: v.InferOutput<typeof listInput>): Promise<CallToolResult> {
  const jobs = await env.service.list(toListRequest(args));
  if (jobs.length === 0) {
    const filters = Object.entries(args)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${quotedFilter(value)}`)
      .join(", ");
    return toolResult(
      { jobs: [], count: 0 },
      `No jobs match${filters ? ` (${filters})` : ""}. Start one with run or submit_job.`,
    );
  }
  const arrayApi = env.service.arrays;
  const shown = arrayApi ? arrayApi.annotate(jobs) : jobs;
  const arrays = arrayApi ? arrayApi.progress(jobs.map((j) => j.job_id)) : [];
  // bounded (list-bounds.ts): each row's command and texts cut, rows past the answer's budget left out, both said
  const list = boundList(
    shown,
    (job) =>
      `${job.job_id}  ${job.state.padEnd(9)}  ${(job.elapsed_seconds === undefined ? "-" : formatSeconds(job.elapsed_seconds)).padStart(6)}  ${job.name ?? job.argv.join(" ").slice(0, 60)}${listNote(job)}`,
  );
  const leftOut = leftOutNote(list);
  const progress = arrays.map((a) => `Array ${a.job_id} (${a.array}) ${a.state}: ${progressWords(a)}`);
  const note = leftOut
    ? [
        `(${list.leftOut > 0 ? `${list.leftOut} older job(s) left out` : ""}${list.leftOut > 0 && list.cutRows > 0 ? "; " : ""}${list.cutRows > 0 ? `${list.cutRows} row(s) cut` : ""}: ${leftOut.why}. ${leftOut.next}.)`,
      ]
    : [];
  return toolResult(
    {
      jobs: list.rows,
      count: list.rows.length,
      ...(arrays.length > 0 ? { arrays } : {}),
      ...(leftOut ? { left_out: leftOut } : {}),
    },
    `${list.rows.length} job(s):\n${[...list.lines, ...progress, ...note].join("\n")}`,
  );
}

/** What a listed job's line adds: its array task, its attempt, what a held or retrying job waits for. */
function listNote(job: JobStatus & { array_task?: string }): string {
  const notes = [
    ...(job.array_task ? [`task ${job.array_task}`] : []),
    ...(job.attempts !== undefined ? [`attempt ${job.attempt} of ${job.attempts}`] : []),
    ...(job.state === "queued" && (job.after || job.next_attempt_at) && job.status_message
      ? [job.status_message]
      : []),
  ];
  return notes.length > 0 ? `  [${notes.join("; ")}]` : "";
}

/** A status's command, directory and target in one line (its text holds what a model needs of the structured one). */
function whatAndWhere(status: JobStatus): string {
  const argv = status.argv;
  const command = argv.length === 3 && argv[0] === "sh" && argv[1] === "-c" ? argv[2]! : argv.join(" ");
  const parts = [`Command: ${status.name ? `${status.name}: ` : ""}${command}`, `cwd ${status.cwd}`];
  if (status.host) parts.push(`on ${status.host} (${status.backend})`);
  if (status.queue) parts.push(`queue ${status.queue}`);
  if (status.after?.length) parts.push(`after ${status.after.join(", ")}`);
  return `${parts.join("; ")}.`;
}

/** A task address `ARRAY_ID.INDEX` → its job ID; any other ID as given. */
function taskJob(env: ToolEnv, jobId: string): string {
  return env.service.arrays && /\.\d+$/.test(jobId) ? env.service.arrays.resolve(jobId).id : jobId;
}

function arraySentence(a: ArrayView): string {
  const counts = Object.entries(a.counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
  const failed = a.failed_indices.length ? `; failed indices ${a.failed_indices.join(",")}` : "";
  return `Array ${a.job_id} (${a.array}) ${a.state}: ${a.tasks} tasks: ${counts || "none launched"}${failed}`;
}

/** submit_job/run/run_job with `array`: every task launched, then (run, run_job) a hold for them all. */
async function launchArray(
  env: ToolEnv,
  req: LaunchRequest,
  array: string,
  holdMs: number | null,
  ctx?: CallCtx,
): Promise<CallToolResult> {
  const arrays = env.service.arrays;
  if (!arrays) throw new Error("this server's job service has no job arrays");
  const r = await arrays.submit(req, array);
  if (holdMs === null || !ctx) {
    const next_action = `Call wait_for_job with {"job_id":"${r.job_id}"} for every task's end; one task is "${r.job_id}.INDEX".`;
    return toolResult({ ...r, next_action }, `Submitted array. ${arraySentence(r)}.\n${next_action}`);
  }
  return waitArray(env, r.job_id, holdMs, ctx);
}

async function waitArray(
  env: ToolEnv,
  arrayId: string,
  timeoutMs: number,
  ctx: CallCtx,
): Promise<CallToolResult> {
  const arrays = env.service.arrays!;
  const w = await holdWithProgress(
    ctx.hold,
    async () => arraySentence(await arrays.status(arrayId)),
    (hooks) => arrays.wait(arrayId, { timeoutMs, ...hooks }),
  );
  if (w.wait_state === "complete")
    return answerResult(w, `${arraySentence(w)}.`, { isError: w.state !== "succeeded" });
  const next_action = `Only this wait ended; no task was killed. Call wait_for_job with {"job_id":"${arrayId}"} again.`;
  return answerResult({ ...w, next_action }, `${arraySentence(w)}.\n${next_action}`);
}
