// One MCP tool as one value: name, description, annotations, valibot input and a call that gets that input typed.
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/server";
import type * as v from "valibot";
import type { JobServiceApi } from "../../core/model/service-api.ts";
import type { McpConfig } from "../config.ts";
import type { SessionFinishedJobs } from "../finished-jobs.ts";
import type { HoldContext } from "../hold.ts";
import type { JobWatch } from "../job-watch.ts";
import type { TaskView } from "../task-view.ts";
import { type ArgsProblem, parseArgs, strictInput } from "./args.ts";

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
/** What a tool's call gives: a result, or (run_job for a Tasks client) the task it started. */
export type ToolOutcome = CallToolResult | TaskOutcome;

export function isTaskOutcome(outcome: ToolOutcome): outcome is TaskOutcome {
  return (outcome as Partial<TaskOutcome>).kind === "task";
}

export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
// Hints at their MCP defaults (readOnlyHint false, destructiveHint true, openWorldHint true) are left out; a
// launched command may reach anything, so the default openWorldHint is the honest one there.
export const LAUNCHES: ToolAnnotations = { destructiveHint: false };

/** A call whose arguments passed the check, ready to run; or why they were refused. */
export type PreparedCall =
  | { ok: true; run: (env: ToolEnv, ctx: CallCtx) => Promise<ToolOutcome> }
  | ({ ok: false } & ArgsProblem);

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly annotations: ToolAnnotations;
  /** What it validates and lists: its entries, any other argument refused by name. */
  readonly schema: v.StrictObjectSchema<v.ObjectEntries, undefined>;
  /** Checks a call's arguments (parseArgs) and binds them, typed, to the tool's call. */
  prepare(args: unknown): PreparedCall;
}

/** The one way to make a tool: `call` receives `input`'s parsed output, so no tool casts its arguments. */
export function defineTool<E extends v.ObjectEntries>(def: {
  name: string;
  description: string;
  annotations: ToolAnnotations;
  input: v.ObjectSchema<E, undefined>;
  call: (
    env: ToolEnv,
    args: v.InferOutput<v.ObjectSchema<E, undefined>>,
    ctx: CallCtx,
  ) => Promise<ToolOutcome>;
}): Tool {
  const schema = strictInput(def.input);
  return {
    name: def.name,
    description: def.description,
    annotations: def.annotations,
    schema,
    prepare(args) {
      const parsed = parseArgs(schema, args);
      if (!parsed.ok) return parsed;
      return { ok: true, run: (env, ctx) => def.call(env, parsed.value, ctx) };
    },
  };
}

/** The service's named queues (every service the server is built with has them; a test double may not). */
export function queuesOf(env: ToolEnv): Required<Pick<JobServiceApi, "createQueue" | "listQueues">> {
  const { createQueue, listQueues } = env.service;
  if (!createQueue || !listQueues) throw new Error("this server's job service has no named queues");
  return {
    createQueue: createQueue.bind(env.service),
    listQueues: listQueues.bind(env.service),
  };
}
