// The tool surface: descriptions (when to use, when not), listing through McpServer, and our own tools/call.
import {
  type CallToolResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type RegisteredTool,
  type ServerContext,
  type ToolAnnotations,
} from "@modelcontextprotocol/server";
import type * as v from "valibot";
import { AwaitlessError } from "../core/model/errors.ts";
import { noSpaceFromErrno } from "../core/util/no-space.ts";
import { type KnownClient, knownClient, withoutInjected } from "./clients.ts";
import { holdChoiceFor } from "./config.ts";
import type { HoldContext, ProgressToken } from "./hold.ts";
import { withJsonSchema } from "./json-schema.ts";
import { errorResult } from "./results.ts";
import { assertTaskSupported, createTaskResult, requestedTask } from "./tasks-2025.ts";
import * as h from "./tool-handlers.ts";
import * as inputs from "./tool-inputs.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

interface ToolDef {
  description: string;
  schema: v.ObjectSchema<v.ObjectEntries, undefined>;
  annotations: ToolAnnotations;
  call: (env: h.ToolEnv, args: never, ctx: h.CallCtx) => Promise<h.RunJobOutcome>;
}

const readOnly: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
// Hints at their MCP defaults (readOnlyHint false, destructiveHint true, openWorldHint true) are left out; a
// launched command may reach anything, so the default openWorldHint is the honest one there.
const launches: ToolAnnotations = { destructiveHint: false };

export const TOOLS: Record<string, ToolDef> = {
  run: {
    description:
      "Run a command, get its result: the default for any command of unknown duration. Done " +
      'within inline_timeout_seconds: exit code, tails, digest; else delivery "detached": then call wait_for_job, ' +
      "never sleep or poll. Not for interactive commands, a started job, many jobs (submit_job).",
    schema: inputs.runInput,
    annotations: launches,
    call: h.runTool as ToolDef["call"],
  },
  submit_job: {
    description:
      "Start a background job, get its job_id at once; arguments as in run. Use to fan out. Not for a " +
      "result now (run).",
    schema: inputs.submitInput,
    annotations: launches,
    call: h.submitTool as ToolDef["call"],
  },
  run_job: {
    description:
      "Run a command as an MCP Task (taskId = job_id); arguments as in run. Use if your client has MCP " +
      "Tasks; not for others (run).",
    schema: inputs.runJobInput,
    annotations: launches,
    call: h.runJobTool as ToolDef["call"],
  },
  wait_for_job: {
    description:
      "Wait for a job's result. Use after run detaches or submit_job; on client_timeout call it " +
      "again. Not for several jobs (wait_for_completions). Never sleep or poll.",
    schema: inputs.waitInput,
    annotations: readOnly,
    call: h.waitTool as ToolDef["call"],
  },
  wait_for_completions: {
    description:
      "Wait until any of several jobs finishes; pass next_cursor as after_cursor. Use after submit_job. Not " +
      "for one job (wait_for_job).",
    schema: inputs.completionsInput,
    annotations: readOnly,
    call: h.completionsTool as ToolDef["call"],
  },
  get_job_status: {
    description:
      "A job's state now. Use for a quick look. Not for waiting (wait_for_job) or output (get_job_logs).",
    schema: inputs.statusInput,
    annotations: readOnly,
    call: h.statusTool as ToolDef["call"],
  },
  get_job_logs: {
    description:
      "Read a job's whole stdout/stderr: grep, head, tail, line ranges, next_from_line cursors. Use past " +
      "a result's tails. Not for waiting.",
    schema: inputs.logsInput,
    annotations: readOnly,
    call: h.logsTool as ToolDef["call"],
  },
  cancel_job: {
    description:
      "Stop a job (SIGTERM, then SIGKILL). Use when wrong or unneeded. Not needed to stop " + "waiting.",
    schema: inputs.cancelInput,
    annotations: { idempotentHint: true, openWorldHint: false },
    call: h.cancelTool as ToolDef["call"],
  },
  create_queue: {
    description:
      "Create a FIFO queue of N slots. Use so jobs with queue: NAME wait for a slot. Not for Slurm.",
    schema: inputs.createQueueInput,
    annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: h.createQueueTool as ToolDef["call"],
  },
  list_queues: {
    description:
      "List queues, their jobs, ETA. Use to see why a job is queued. Not for one job (get_job_status).",
    schema: inputs.listQueuesInput,
    annotations: readOnly,
    call: h.listQueuesTool as ToolDef["call"],
  },
  list_jobs: {
    description: "List recent jobs. Use to find a lost job ID. Not for one known job (get_job_status).",
    schema: inputs.listInput,
    annotations: readOnly,
    call: h.listTool as ToolDef["call"],
  },
};

/** The launch arguments described once, in run's schema; the other launch tools point there. */
const launchKeys = Object.keys(inputs.launchEntries);
const SHARED_LAUNCH: Record<string, ReadonlySet<string>> = {
  submit_job: new Set(launchKeys),
  run_job: new Set(launchKeys.filter((key) => key !== "client_request_id")),
};

/** Lists the tools through McpServer (tools/list), then replaces tools/call with the task-aware handler. */
export function registerTools(mcp: McpServer, env: h.ToolEnv): Record<string, RegisteredTool> {
  const strict = new Map(Object.entries(TOOLS).map(([name, def]) => [name, inputs.strictInput(def.schema)]));
  // A client whose own check would refuse an unlisted argument without naming it gets open schemas: we name it.
  const listedOpen = () => knownClient(mcp.server.getClientVersion()?.name)?.unnamedRefusals === true;
  const registered: Record<string, RegisteredTool> = {};
  for (const [name, def] of Object.entries(TOOLS)) {
    registered[name] = mcp.registerTool(
      name,
      {
        description: def.description,
        inputSchema: withJsonSchema(strict.get(name)!, SHARED_LAUNCH[name], listedOpen),
        annotations: def.annotations,
      },
      () => {
        throw new Error(`tools/call for ${name} is served by the Awaitless handler`);
      },
    );
  }
  mcp.server.setRequestHandler("tools/call", async (request, ctx) => {
    const def = TOOLS[request.params.name];
    if (def === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Tool ${request.params.name} not found; the tools are: ${Object.keys(TOOLS).join(", ")}.`,
      );
    }
    const client = knownClient(clientNameOf(mcp, ctx));
    const parsed = inputs.parseArgs(
      strict.get(request.params.name)!,
      withoutInjected(request.params.arguments),
    );
    if (!parsed.ok) {
      const refusal = errorResult(
        new AwaitlessError(
          "invalid_argument",
          `Invalid arguments for ${request.params.name}: ${parsed.message}.`,
          parsed.hint,
          parsed.details,
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
      const outcome = await def.call(env, parsed.value as never, callCtx);
      if (h.isTaskOutcome(outcome)) {
        if (task2025 !== undefined) return createTaskResult(mcp, outcome.task, callCtx.hold.progressToken);
        return { resultType: "task", ...outcome.task } as unknown as CallToolResult;
      }
      const result = h.markShellForm(outcome, parsed.value);
      await env.finished?.nameLinks(result);
      const annotated = (await env.finished?.annotate(result)) ?? result;
      return mcp.server.projectCallToolResult(forClient(annotated, client), undefined);
    } catch (error) {
      if (ctx.mcpReq.signal.aborted) throw error;
      const result = errorResult(noSpaceFromErrno(error) ?? error);
      return forClient((await env.finished?.annotate(result)) ?? result, client);
    } finally {
      // A full disk kept observations out of the store: the results above came from the jobs' records.
      for (const notice of env.service.storeNotices()) {
        process.stderr.write(`awaitless mcp: warning: ${notice}\n`);
      }
    }
  });
  return registered;
}

type Envelope = {
  "io.modelcontextprotocol/clientCapabilities"?: { extensions?: Record<string, unknown> };
  "io.modelcontextprotocol/clientInfo"?: { name?: string };
};

export function envelopeOf(ctx: ServerContext): Envelope | undefined {
  return ctx.mcpReq.envelope as Envelope | undefined;
}

/** Whether this request declared the Tasks extension in its per-request capabilities (2026 envelope). */
export function requestHasTasks(ctx: ServerContext): boolean {
  return (
    envelopeOf(ctx)?.["io.modelcontextprotocol/clientCapabilities"]?.extensions?.[TASKS_EXTENSION] !==
    undefined
  );
}

const announced = new WeakMap<h.ToolEnv, Set<string>>();

/** The client's hold budget; the first call of each client name on a connection logs it (stderr) with its source. */
function announcedHold(env: h.ToolEnv, clientName: string | undefined): number {
  const choice = holdChoiceFor(env.config, clientName);
  const seen = announced.get(env) ?? new Set<string>();
  announced.set(env, seen);
  const key = clientName ?? "";
  if (!seen.has(key)) {
    seen.add(key);
    process.stderr.write(
      `awaitless mcp: client ${JSON.stringify(clientName ?? "(unnamed)")}: hold budget ${choice.budgetMs / 1000}s (${choice.source})\n`,
    );
  }
  return choice.budgetMs;
}

/** The calling client's `clientInfo.name`: from the 2026 request envelope, else from `initialize`. */
function clientNameOf(mcp: McpServer, ctx: ServerContext): string | undefined {
  return envelopeOf(ctx)?.["io.modelcontextprotocol/clientInfo"]?.name ?? mcp.server.getClientVersion()?.name;
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

export function callContext(mcp: McpServer, env: h.ToolEnv, ctx: ServerContext): h.CallCtx {
  const clientName = clientNameOf(mcp, ctx);
  const hold: HoldContext = {
    progressToken: ctx.mcpReq._meta?.progressToken as ProgressToken | undefined,
    notify: (notification) => ctx.mcpReq.notify(notification as Parameters<typeof ctx.mcpReq.notify>[0]),
    signal: env.ending ? AbortSignal.any([ctx.mcpReq.signal, env.ending]) : ctx.mcpReq.signal,
    budgetMs: announcedHold(env, clientName),
    progressIntervalMs: env.config.progressIntervalMs,
  };
  return { hold, tasks: requestHasTasks(ctx) };
}
