// 2025-11-25 Tasks (in-core `capabilities.tasks`, what VS Code speaks): task-augmented tools/call,
// tasks/get|result|list|cancel and notifications/tasks/status over durable jobs (taskId = job_id).
import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as v from "valibot";
import { isTerminal } from "../core/model/job.ts";
import { isDelivered, type JobStatus } from "../core/model/service-api.ts";
import { holdWithProgress, type ProgressToken, statusSentence } from "./hold.ts";
import { finalToolResult, findTask, isExpired, type TaskView, taskView } from "./task-view.ts";
import type { ToolEnv } from "./tools/define.ts";

/** What the server declares to a client that declared `capabilities.tasks` on initialize. */
export const TASKS_2025_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** `execution.taskSupport` per tool; every other tool is "forbidden" (the default when absent). */
export const TASK_SUPPORT: Record<string, "optional"> = { run_job: "optional" };

const RELATED_TASK = "io.modelcontextprotocol/related-task";
const IMMEDIATE_RESPONSE = "io.modelcontextprotocol/model-immediate-response";

/** Tasks per tasks/list page. */
export const TASK_LIST_PAGE_SIZE = 20;
/** How many of the newest jobs tasks/list pages through (the store's own listing bound). */
const TASK_LIST_SCAN = 10_000;

/** The 2025-11-25 `Task`: the same view as the extension's, with its field names (`ttl`, `pollInterval`). */
export interface Task2025 {
  taskId: string;
  status: TaskView["status"];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval: number;
}

export function task2025(view: TaskView): Task2025 {
  const { ttlMs, pollIntervalMs, ...rest } = view;
  return { ...rest, ttl: ttlMs, pollInterval: pollIntervalMs };
}

export function clientDeclaresTasks(mcp: McpServer): boolean {
  return mcp.server.getClientCapabilities()?.tasks !== undefined;
}

/** The `task` of a task-augmented tools/call; ignored (as the spec says) unless the client declared tasks. */
export function requestedTask(mcp: McpServer, params: { task?: unknown }): { ttl?: number } | undefined {
  if (params.task === undefined || params.task === null || !clientDeclaresTasks(mcp)) return undefined;
  return params.task as { ttl?: number };
}

/** -32601 for a task-augmented call of a tool whose execution.taskSupport is "forbidden" (the spec). */
export function assertTaskSupported(toolName: string): void {
  if (TASK_SUPPORT[toolName] !== undefined) return;
  throw new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `Tool ${toolName} does not run as a task (its execution.taskSupport is "forbidden"): call it without params.task, ` +
      "or call run_job as a task. Any job ID is also a taskId for tasks/get and tasks/result.",
  );
}

/**
 * The CreateTaskResult for a task-augmented run_job. `content: []` satisfies the SDK's 2025 result schema
 * (the stdio edge removes it again); the model-immediate-response text is what a host hands the model
 * meanwhile. The call's progressToken stays valid for the task's life (the spec): progress continues on it.
 */
export function createTaskResult(
  mcp: McpServer,
  view: TaskView,
  progressToken?: ProgressToken,
): CallToolResult {
  statusFeeds.get(mcp)?.follow(view.taskId, progressToken);
  const text =
    `Job ${view.taskId} is running as a task (taskId = job_id); its result arrives when the task completes. ` +
    `To wait for it in this conversation, call wait_for_job with {"job_id":"${view.taskId}"}.`;
  return { content: [], task: task2025(view), _meta: { [IMMEDIATE_RESPONSE]: text } } as CallToolResult;
}

/**
 * Sends notifications/tasks/status when a task this connection created or asked about ends, and progress
 * on the creating call's token while it works (each progress interval: the status sentence, task-tagged).
 */
class StatusFeed {
  private readonly followed = new Set<string>();
  private readonly tickers = new Map<string, ReturnType<typeof setInterval>>();
  constructor(
    private readonly mcp: McpServer,
    private readonly env: ToolEnv,
  ) {
    env.watch.onEnded((jobId) => {
      this.stopProgress(jobId);
      if (this.followed.delete(jobId)) this.announce(jobId).catch(() => {});
    });
  }

  follow(jobId: string, progressToken?: ProgressToken): void {
    if (!clientDeclaresTasks(this.mcp)) return;
    this.followed.add(jobId);
    if (progressToken !== undefined && !this.tickers.has(jobId)) this.startProgress(jobId, progressToken);
    this.env.watch.watch(jobId);
  }

  private startProgress(jobId: string, progressToken: ProgressToken): void {
    let progress = 0;
    const tick = async () => {
      const status = await this.env.service.status(jobId);
      if (isTerminal(status.state) || !this.tickers.has(jobId)) return this.stopProgress(jobId);
      const params = {
        progressToken,
        progress: ++progress,
        message: statusSentence(status),
        _meta: { [RELATED_TASK]: { taskId: jobId } },
      };
      await this.mcp.server.notification({ method: "notifications/progress", params });
    };
    // Stops at the job's end, or at the first notification that cannot be sent (the connection is gone).
    const timer = setInterval(() => {
      tick().catch(() => this.stopProgress(jobId));
    }, this.env.config.progressIntervalMs);
    timer.unref?.();
    this.tickers.set(jobId, timer);
  }

  private stopProgress(jobId: string): void {
    clearInterval(this.tickers.get(jobId));
    this.tickers.delete(jobId);
  }

  private async announce(jobId: string): Promise<void> {
    const status = await this.env.service.status(jobId);
    const params = task2025(taskView(status, this.env.config));
    await this.mcp.server.notification({ method: "notifications/tasks/status", params } as never);
  }
}

const statusFeeds = new WeakMap<McpServer, StatusFeed>();

const taskParams = v.looseObject({ taskId: v.string("taskId must be a string") });
const listParams = v.looseObject({ cursor: v.optional(v.string("cursor must be a string")) });

/** Opaque cursor: the last job ID of the page before, base64url. */
const encodeCursor = (jobId: string) => Buffer.from(jobId, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const jobId = Buffer.from(cursor, "base64url").toString("utf8");
  if (cursor === "" || jobId === "" || encodeCursor(jobId) !== cursor) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid cursor ${JSON.stringify(cursor)} for tasks/list: pass the nextCursor of the previous page unchanged, or no cursor for the first page.`,
    );
  }
  return jobId;
}

/** tasks/result: the job's final CallToolResult, held with progress until the job ends (many holds). */
async function taskResult(
  env: ToolEnv,
  status: JobStatus,
  ctx: ServerContext,
  holdOf: (ctx: ServerContext) => Parameters<typeof holdWithProgress>[0],
): Promise<CallToolResult> {
  const base = holdOf(ctx);
  // One progress sequence across the successive holds: `progress` keeps increasing for the request's token.
  let progress = 0;
  const hold = {
    ...base,
    notify: (n: { method: string; params: Record<string, unknown> }) =>
      base.notify({ ...n, params: { ...n.params, progress: ++progress } }),
  };
  const jobId = status.job_id;
  for (;;) {
    const started = Date.now();
    const resp = await holdWithProgress(hold, (hooks) =>
      env.service.wait(jobId, { timeoutMs: hold.budgetMs, ...hooks }),
    );
    if (isDelivered(resp)) {
      env.finished?.delivered(jobId);
      return { ...finalToolResult(resp), _meta: { [RELATED_TASK]: { taskId: jobId } } };
    }
    if (hold.signal.aborted) {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `The server stopped before task ${jobId} finished; the job keeps running. Call tasks/result with ` +
          `{"taskId":"${jobId}"} again (a new session finds it too).`,
      );
    }
    // A wait that came back at once without a result (its host unreachable): pause before the next one.
    if (Date.now() - started < 1_000) await abortableDelay(env.config.taskPollIntervalMs, hold.signal);
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** A tool's `execution` in tools/list: run_job's taskSupport, to a client whose initialize declared tasks. */
export function executionOf(mcp: McpServer, toolName: string): { taskSupport: "optional" } | undefined {
  const taskSupport = TASK_SUPPORT[toolName];
  return taskSupport !== undefined && clientDeclaresTasks(mcp) ? { taskSupport } : undefined;
}

/**
 * Registers the four 2025-11-25 methods and makes the server declare `capabilities.tasks` to a client whose
 * initialize declared tasks: the SDK records the client's capabilities just before it asks for the server's,
 * so the answer can depend on them.
 */
export function registerTasks2025(
  mcp: McpServer,
  env: ToolEnv,
  holdOf: (ctx: ServerContext) => Parameters<typeof holdWithProgress>[0],
): void {
  const server = mcp.server;
  const baseCapabilities = server.getCapabilities.bind(server);
  server.getCapabilities = () => {
    if (!clientDeclaresTasks(mcp)) return baseCapabilities();
    return { ...baseCapabilities(), tasks: TASKS_2025_CAPABILITY };
  };
  const feed = new StatusFeed(mcp, env);
  statusFeeds.set(mcp, feed);
  const find = async (taskId: string) => {
    const status = await findTask(env.service, env.config, taskId);
    if (!isTerminal(status.state)) feed.follow(status.job_id);
    return status;
  };

  server.setRequestHandler("tasks/get", { params: taskParams }, async (params) => {
    const status = await find(params.taskId);
    return task2025(taskView(status, env.config)) as unknown as Record<string, unknown>;
  });
  server.setRequestHandler("tasks/result", { params: taskParams }, async (params, ctx) => {
    const status = await find(params.taskId);
    return (await taskResult(env, status, ctx, holdOf)) as unknown as Record<string, unknown>;
  });
  server.setRequestHandler("tasks/list", { params: listParams }, async (params) => {
    const after = params.cursor === undefined ? undefined : decodeCursor(params.cursor);
    const jobs = (await env.service.list({ limit: TASK_LIST_SCAN })).filter(
      (job) => !isExpired(job, env.config) && (after === undefined || job.job_id < after),
    );
    const page = jobs.slice(0, TASK_LIST_PAGE_SIZE);
    const tasks = page.map((job) => task2025(taskView(job, env.config)));
    const last = page.at(-1);
    return jobs.length > page.length && last ? { tasks, nextCursor: encodeCursor(last.job_id) } : { tasks };
  });
  server.setRequestHandler("tasks/cancel", { params: taskParams }, async (params) => {
    const status = await find(params.taskId);
    if (isTerminal(status.state)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Task ${status.job_id} has already ended (${status.state}); there is nothing to cancel. Its result: tasks/result.`,
      );
    }
    // The job service signals the job and waits (grace period + 5 s) until it has stopped.
    await env.service.cancel(status.job_id);
    return task2025(taskView(await env.service.status(status.job_id), env.config)) as unknown as Record<
      string,
      unknown
    >;
  });
}
