// Jobs seen as MCP Tasks (docs/protocol.md, "MCP Tasks mapping"): taskId = job_id, status, TTL, inlined result.
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { AwaitlessError } from "../core/model/errors.ts";
import { isTerminal } from "../core/model/job.ts";
import {
  isDelivered,
  type JobServiceApi,
  type JobStatus,
  type WaitResponse,
} from "../core/model/service-api.ts";
import type { McpConfig } from "./config.ts";
import { statusSentence } from "./hold.ts";
import { answerText } from "./result-text.ts";
import { answerResult, isFailure, mcpWait } from "./results.ts";

export type TaskStatus = "working" | "completed" | "cancelled" | "failed" | "input_required";

/** The 2026-07-28 Task shape (ext-tasks `Task`). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number;
}

export function taskStatusOf(status: JobStatus): TaskStatus {
  if (!isTerminal(status.state)) return "working";
  return status.state === "cancelled" ? "cancelled" : "completed";
}

function latest(...stamps: Array<string | null>): string {
  let best = "";
  for (const stamp of stamps) if (stamp !== null && stamp > best) best = stamp;
  return best;
}

/**
 * TTL counts from creation, so it grows while the job works and is fixed at
 * (finished − created) + taskTtlMs once it ends: the handle stays visible for taskTtlMs after the end.
 */
export function ttlMsOf(status: JobStatus, config: McpConfig, nowMs: number = Date.now()): number | null {
  if (config.taskTtlMs === null) return null;
  const createdMs = Date.parse(status.created_at);
  const endMs = status.finished_at === null ? nowMs : Date.parse(status.finished_at);
  return Math.max(0, Math.round(endMs - createdMs)) + config.taskTtlMs;
}

export function isExpired(status: JobStatus, config: McpConfig, nowMs: number = Date.now()): boolean {
  if (config.taskTtlMs === null || status.finished_at === null) return false;
  return nowMs > Date.parse(status.finished_at) + config.taskTtlMs;
}

export function taskView(status: JobStatus, config: McpConfig, nowMs: number = Date.now()): TaskView {
  const taskStatus = taskStatusOf(status);
  const statusMessage =
    taskStatus === "working"
      ? statusSentence(status, nowMs)
      : `${status.state}${status.exit_code !== null ? ` (exit ${status.exit_code})` : ""}${status.reason ? `: ${status.reason}` : ""}`;
  return {
    taskId: status.job_id,
    status: taskStatus,
    statusMessage,
    createdAt: status.created_at,
    lastUpdatedAt: latest(status.created_at, status.started_at, status.last_output_at, status.finished_at),
    ttlMs: ttlMsOf(status, config, nowMs),
    pollIntervalMs: config.taskPollIntervalMs,
  };
}

/**
 * The CallToolResult a finished run_job returns (blocking call, tasks/get inline result, tasks/result): a
 * delivered result carries no resource link (it holds the whole result); a pending one links the job.
 */
export function finalToolResult(resp: WaitResponse) {
  const out = mcpWait(resp);
  return answerResult(out, answerText(out), {
    ...(!isDelivered(resp) && { jobId: out.job_id }),
    isError: isFailure(out),
  });
}

/** Looks a task up by job ID: unknown or expired → -32602, as the Tasks spec requires. */
export async function findTask(
  service: JobServiceApi,
  config: McpConfig,
  taskId: string,
): Promise<JobStatus> {
  let status: JobStatus;
  try {
    status = await service.status(taskId);
  } catch (error) {
    if (
      error instanceof AwaitlessError &&
      (error.code === "not_found" || error.code === "invalid_argument")
    ) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Failed to retrieve task: Task not found (${taskId}); call list_jobs to see known jobs.`,
      );
    }
    throw error;
  }
  if (isExpired(status, config)) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Failed to retrieve task: Task has expired (${taskId}); its job result is still available through wait_for_job.`,
    );
  }
  return status;
}

/** tasks/get body: the Task plus the inlined result when completed (with resultType, which requesters need). */
export async function detailedTask(service: JobServiceApi, config: McpConfig, status: JobStatus) {
  const view = taskView(status, config);
  if (view.status !== "completed") return { ...view };
  const resp = await service.wait(status.job_id, { timeoutMs: 0 });
  return { ...view, result: { resultType: "complete", ...finalToolResult(resp) } };
}
