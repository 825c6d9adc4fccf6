// Tasks extension (2026-07-28) methods: tasks/get, tasks/update, tasks/cancel over durable jobs (taskId = job_id).
import {
  type McpServer,
  MissingRequiredClientCapabilityError,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as v from "valibot";
import { isTerminal } from "../core/model/job.ts";
import type { JobServiceApi } from "../core/model/service-api.ts";
import { requestHasTasks, TASKS_EXTENSION } from "./call-context.ts";
import type { McpConfig } from "./config.ts";
import { detailedTask, findTask } from "./task-view.ts";

const taskParams = v.looseObject({ taskId: v.string("taskId must be a string") });

function requireTasks(ctx: ServerContext): void {
  if (requestHasTasks(ctx)) return;
  throw new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    `Missing required client capability: declare extensions["${TASKS_EXTENSION}"] in the request's clientCapabilities to use tasks/* methods.`,
  );
}

/**
 * Registers the three extension methods with the schema form (the SDK lets the re-used `tasks/get` and
 * `tasks/cancel` names through on the 2026 era only when registered this way) and stamps resultType itself.
 */
export function registerModernTasks(mcp: McpServer, service: JobServiceApi, config: McpConfig): void {
  mcp.server.setRequestHandler("tasks/get", { params: taskParams }, async (params, ctx) => {
    requireTasks(ctx);
    const status = await findTask(service, config, params.taskId);
    return (await detailedTask(service, config, status)) as Record<string, unknown>;
  });
  mcp.server.setRequestHandler("tasks/update", { params: taskParams }, async (params, ctx) => {
    requireTasks(ctx);
    // Our jobs never ask for input, so inputResponses (and any unknown key) are acknowledged and ignored.
    await findTask(service, config, params.taskId);
    return {};
  });
  mcp.server.setRequestHandler("tasks/cancel", { params: taskParams }, async (params, ctx) => {
    requireTasks(ctx);
    const status = await findTask(service, config, params.taskId);
    if (!isTerminal(status.state)) await service.cancel(status.job_id);
    return {};
  });
}
