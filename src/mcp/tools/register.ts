// The one registration path of the tools: our tools/list and tools/call handlers (nothing registered on McpServer).
import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type Tool,
} from "@modelcontextprotocol/server";
import { AwaitlessError } from "../../core/model/errors.ts";
import { noSpaceFromErrno } from "../../core/util/no-space.ts";
import { callContext, clientNameOf } from "../call-context.ts";
import { type KnownClient, knownClient, withoutInjected } from "../clients.ts";
import { listedInputSchema } from "../json-schema.ts";
import { errorResult } from "../results.ts";
import { diagnose } from "../stdio-streams.ts";
import { assertTaskSupported, createTaskResult, requestedTask } from "../tasks-2025.ts";
import { TOOLS, toolNamed } from "./catalog.ts";
import { isTaskOutcome, type ToolEnv } from "./define.ts";

/** `execution` of a tool in tools/list (2025-11-25 Tasks: run_job's taskSupport to a client that declared tasks). */
export type ExecutionOf = (toolName: string) => Tool["execution"];

/**
 * Declares the tools capability and serves tools/list and tools/call: each call's arguments checked by its tool
 * (unknown ones refused by name), a client's own injected arguments dropped, the result in the client's form.
 */
export function registerTools(
  mcp: McpServer,
  env: ToolEnv,
  executionOf: ExecutionOf = () => undefined,
): void {
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  mcp.server.setRequestHandler("tools/list", (_request, ctx) => {
    // A client whose own check would refuse an unlisted argument without naming it gets open schemas: we name it.
    const open = knownClient(clientNameOf(mcp, ctx))?.unnamedRefusals === true;
    const tools = Object.values(TOOLS).map((tool) => {
      const execution = executionOf(tool.name);
      return {
        name: tool.name,
        description: tool.description,
        inputSchema: listedInputSchema(tool.schema, open),
        annotations: tool.annotations,
        ...(execution !== undefined && { execution }),
      };
    });
    return { tools };
  });
  mcp.server.setRequestHandler("tools/call", async (request, ctx) => {
    const tool = toolNamed(request.params.name);
    if (tool === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Tool ${request.params.name} not found; the tools are: ${Object.keys(TOOLS).join(", ")}.`,
      );
    }
    const client = knownClient(clientNameOf(mcp, ctx));
    const call = tool.prepare(withoutInjected(request.params.arguments));
    if (!call.ok) {
      const refusal = errorResult(
        new AwaitlessError(
          "invalid_argument",
          `Invalid arguments for ${request.params.name}: ${call.message}.`,
          call.hint,
          call.details,
        ),
      );
      return forClient(refusal, client);
    }
    // A 2025-11-25 task-augmented call (params.task from a client that declared tasks).
    const task2025 = requestedTask(mcp, request.params as { task?: unknown });
    if (task2025 !== undefined) assertTaskSupported(request.params.name);
    const callCtx = callContext(mcp, env, ctx);
    if (task2025 !== undefined) callCtx.tasks = true;
    try {
      const outcome = await call.run(env, callCtx);
      if (isTaskOutcome(outcome)) {
        if (task2025 !== undefined) return createTaskResult(mcp, outcome.task, callCtx.hold.progressToken);
        return { resultType: "task", ...outcome.task } as unknown as CallToolResult;
      }
      await env.finished?.nameLinks(outcome);
      const annotated = (await env.finished?.annotate(outcome)) ?? outcome;
      return mcp.server.projectCallToolResult(forClient(annotated, client), undefined);
    } catch (error) {
      if (ctx.mcpReq.signal.aborted) throw error;
      const result = errorResult(noSpaceFromErrno(error) ?? error);
      return forClient((await env.finished?.annotate(result)) ?? result, client);
    } finally {
      // A full disk kept observations out of the store: the results above came from the jobs' records.
      for (const notice of env.service.storeNotices()) {
        diagnose(`warning: ${notice}`);
      }
    }
  });
}

/**
 * Each part holds the whole answer, so a client whose model would get both gets one: without structuredContent
 * when it hands its model both parts (Qwen Code) or the raw result of an error (Gemini CLI); without the text when
 * that raw result would carry the text twice (Qwen Code's errors).
 */
function forClient(result: CallToolResult, client: KnownClient | undefined): CallToolResult {
  const reads = result.isError ? client?.reads?.error : client?.reads?.ok;
  if (reads === "both" || reads === "raw") delete result.structuredContent;
  else if (reads === "raw-text-twice" && result.structuredContent !== undefined) result.content = [];
  return result;
}
