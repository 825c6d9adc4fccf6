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
import { AwaitlessError } from "../core/errors.ts";
import { noSpaceFromErrno } from "../core/store-errors.ts";
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
const launches: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

export const TOOLS: Record<string, ToolDef> = {
  run: {
    description:
      "Run a command and get its result: the default for any command of unknown duration (builds, test suites, scripts). " +
      "A command that finishes inside the inline window (default 10 s) returns exit code, output tails and failure digest inline; " +
      'a longer one keeps running as a durable job and the call returns delivery "detached" with its job_id: then call wait_for_job ' +
      "(never sleep or poll). timeout_seconds is the job's runtime limit: when it passes the job is killed and ends " +
      "timed_out (inline_timeout_seconds only bounds how long this call waits before detaching). " +
      "Not for: interactive commands (no stdin), waiting on a job you already started (wait_for_job), " +
      "starting many jobs at once (submit_job).",
    schema: inputs.runInput,
    annotations: launches,
    call: h.runTool as ToolDef["call"],
  },
  submit_job: {
    description:
      "Start a command as a durable background job and return its job_id at once, without waiting. Use to fan out several " +
      "jobs, then collect them with wait_for_completions (or one with wait_for_job). Not for a single command whose result " +
      "you want now (use run).",
    schema: inputs.submitInput,
    annotations: launches,
    call: h.submitTool as ToolDef["call"],
  },
  run_job: {
    description:
      "Run a command as an MCP Task (taskId = job_id). Clients with the Tasks extension get a task handle to follow with " +
      "tasks/get; other clients get a call that holds until the job finishes or the hold budget ends (then wait_for_job). " +
      "client_request_id is required so a retry returns the same job instead of launching twice. Prefer run unless your " +
      "client handles MCP Tasks.",
    schema: inputs.runJobInput,
    annotations: launches,
    call: h.runJobTool as ToolDef["call"],
  },
  wait_for_job: {
    description:
      "Wait for one job to finish and get its terminal result (state, exit code, output tails, failure digest, artifacts). " +
      "Event-driven: returns the moment the job ends and sends progress while waiting; before your client would give up it " +
      'returns wait_state "client_timeout" with next_action, and you simply call it again. timeout_seconds bounds only ' +
      "this wait: when it passes the job keeps running, it is never killed by a wait (to stop a job, cancel_job). " +
      "Not for several jobs (wait_for_completions). Never sleep or poll instead of calling this.",
    schema: inputs.waitInput,
    annotations: readOnly,
    call: h.waitTool as ToolDef["call"],
  },
  wait_for_completions: {
    description:
      "Wait until any of several jobs finishes. Returns the finished ones with their results, the still-active job IDs, and " +
      "next_cursor: pass it as after_cursor next time (reusing a cursor replays safely). Use after fanning out with " +
      "submit_job. Not for one job (wait_for_job).",
    schema: inputs.completionsInput,
    annotations: readOnly,
    call: h.completionsTool as ToolDef["call"],
  },
  get_job_status: {
    description:
      "A job's current state without waiting (state, elapsed time, last output, exit code). Use for a quick look. " +
      "Not for waiting (wait_for_job returns when it ends, no polling loop) and not for output (get_job_logs).",
    schema: inputs.statusInput,
    annotations: readOnly,
    call: h.statusTool as ToolDef["call"],
  },
  get_job_logs: {
    description:
      "Read a job's stdout/stderr, all of it reachable: grep searches the whole log (line numbers, matches_total, " +
      "and says when a pattern is absent), head/from_line/to_line page through it, tail_lines reads the end; every " +
      "answer stays within max_bytes and gives next_from_line/next_to_line to read on. Use to look beyond the tails " +
      "a result carries, or at a running job's progress. Not for waiting.",
    schema: inputs.logsInput,
    annotations: readOnly,
    call: h.logsTool as ToolDef["call"],
  },
  cancel_job: {
    description:
      "Stop a job: SIGTERM to its process group, SIGKILL after grace_period_seconds (Slurm: scancel). Use when a job is wrong " +
      "or no longer needed; a finished job is left as it is. Not needed to stop waiting: an ended wait never affects the job.",
    schema: inputs.cancelInput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    call: h.cancelTool as ToolDef["call"],
  },
  create_queue: {
    description:
      "Create a named FIFO queue with a fixed concurrency on this machine or a host (idempotent for the same " +
      "concurrency; another concurrency is refused naming the existing one). Jobs launched with queue: NAME wait on " +
      "the target for a slot, with no client needed, and start in order. Not for Slurm (it schedules itself).",
    schema: inputs.createQueueInput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    call: h.createQueueTool as ToolDef["call"],
  },
  list_queues: {
    description:
      "List named queues: concurrency, running and queued jobs, FIFO positions and an ETA from past runtimes. Use to " +
      "see why a job is queued or how long a queue will take. Not for one job's state (get_job_status).",
    schema: inputs.listQueuesInput,
    annotations: readOnly,
    call: h.listQueuesTool as ToolDef["call"],
  },
  list_jobs: {
    description:
      "List recent jobs with IDs and states; filter by state (a state, 'active' or 'terminal'), host, queue, name. Use to " +
      "find a job ID you lost (for example in a new session). Not for one known job (get_job_status).",
    schema: inputs.listInput,
    annotations: readOnly,
    call: h.listTool as ToolDef["call"],
  },
};

/** Lists the tools through McpServer (tools/list), then replaces tools/call with the task-aware handler. */
export function registerTools(mcp: McpServer, env: h.ToolEnv): Record<string, RegisteredTool> {
  const strict = new Map(Object.entries(TOOLS).map(([name, def]) => [name, inputs.strictInput(def.schema)]));
  const registered: Record<string, RegisteredTool> = {};
  for (const [name, def] of Object.entries(TOOLS)) {
    registered[name] = mcp.registerTool(
      name,
      {
        description: def.description,
        inputSchema: withJsonSchema(strict.get(name)!),
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
    const parsed = inputs.parseArgs(strict.get(request.params.name)!, request.params.arguments);
    if (!parsed.ok) {
      return errorResult(
        new AwaitlessError(
          "invalid_argument",
          `Invalid arguments for ${request.params.name}: ${parsed.message}.`,
          parsed.hint,
          parsed.details,
        ),
      );
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
      return mcp.server.projectCallToolResult((await env.finished?.annotate(result)) ?? result, undefined);
    } catch (error) {
      if (ctx.mcpReq.signal.aborted) throw error;
      const result = errorResult(noSpaceFromErrno(error) ?? error);
      return (await env.finished?.annotate(result)) ?? result;
    } finally {
      // A full disk kept observations out of the store: the results above came from the jobs' records.
      for (const notice of env.service.storeNotices?.() ?? []) {
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

export function callContext(mcp: McpServer, env: h.ToolEnv, ctx: ServerContext): h.CallCtx {
  const clientName =
    envelopeOf(ctx)?.["io.modelcontextprotocol/clientInfo"]?.name ?? mcp.server.getClientVersion()?.name;
  const hold: HoldContext = {
    progressToken: ctx.mcpReq._meta?.progressToken as ProgressToken | undefined,
    notify: (notification) => ctx.mcpReq.notify(notification as Parameters<typeof ctx.mcpReq.notify>[0]),
    signal: env.ending ? AbortSignal.any([ctx.mcpReq.signal, env.ending]) : ctx.mcpReq.signal,
    budgetMs: announcedHold(env, clientName),
    progressIntervalMs: env.config.progressIntervalMs,
  };
  return { hold, tasks: requestHasTasks(ctx) };
}
