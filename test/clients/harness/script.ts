// A scenario's script: the tool calls the "model" makes in turn, one step per tool result it has received.
import type { Reply, ToolDecl, ToolResultSeen, Turn } from "./types.ts";

export interface StepContext {
  turn: Turn;
  /** The results of the calls made so far, as the client passed them (oldest first). */
  results: ToolResultSeen[];
  /** The newest result. */
  last: ToolResultSeen | undefined;
  /** The newest job ID the model has read in a result (throws if it has read none). */
  jobId(): string;
}

export type Step = (ctx: StepContext) => Reply;
export type Args = Record<string, unknown>;

const JOB_ID = /job_[0-9A-HJKMNP-TV-Z]{26}/g;

export function contextOf(turn: Turn): StepContext {
  const results = turn.results;
  return {
    turn,
    results,
    last: results.at(-1),
    jobId() {
      for (const r of [...results].reverse()) {
        const ids = r.text.match(JOB_ID);
        if (ids) return ids[0]!;
      }
      throw new Error("the model has read no job ID in any tool result");
    },
  };
}

/** The name the client gave one of our tools (`run` → `mcp__awaitless__run`, `awaitless_run`, `run`, …). */
export function toolName(tools: ToolDecl[], ours: string): string | undefined {
  const exact = tools.find((t) => t.name === ours);
  if (exact) return exact.name;
  return tools.find((t) => /awaitless/i.test(t.name) && new RegExp(`[^a-z]${ours}$`).test(t.name))?.name;
}

/** A call of one of our tools (by its own name, resolved per client) or of a client tool (`client: true`). */
export function call(
  tool: string,
  args: Args | ((ctx: StepContext) => Args),
  opts: { client?: boolean } = {},
): Step {
  return (ctx) => ({
    kind: "tool",
    name: tool,
    args: typeof args === "function" ? args(ctx) : args,
    ...(opts.client ? {} : { ours: true }),
  });
}

/**
 * How a client lets its model call one of our tools: by the name it declared (`mcp__awaitless__run`,
 * `awaitless_run`, `mcp_awaitless_run`), or through a bridge tool for deferred tools (Qwen Code's tool_call).
 */
export type Route = (turn: Turn, ours: string, args: Args) => Reply | undefined;

export const byDeclaredName: Route = (turn, ours, args) => {
  const name = toolName(turn.tools, ours);
  return name === undefined ? undefined : { kind: "tool", name, args };
};

/** Resolves a step's call of one of our tools for this client; an unknown tool fails the request, named. */
export function routed(reply: Reply, turn: Turn, route: Route = byDeclaredName): Reply {
  if (reply.kind !== "tool" || !reply.ours) return reply;
  const out = route(turn, reply.name, reply.args);
  if (out === undefined) {
    const offered = turn.tools.map((t) => t.name).join(", ");
    throw new Error(`the client offered no tool for "${reply.name}" (offered: ${offered})`);
  }
  return out;
}

export function say(text: string): Step {
  return () => ({ kind: "text", text });
}

/** The step for this turn: one per result received; past the end, the model ends its turn. */
export function stepFor(steps: Step[], turn: Turn, route?: Route): Reply {
  const step = steps[turn.results.length];
  if (step === undefined) return { kind: "text", text: "All done." };
  return routed(step(contextOf(turn)), turn, route);
}
