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

/** A call of one of our tools (by its own name) or of a client tool (`client: true`, exact name). */
export function call(
  tool: string,
  args: Args | ((ctx: StepContext) => Args),
  opts: { client?: boolean } = {},
): Step {
  return (ctx) => {
    const name = opts.client ? tool : toolName(ctx.turn.tools, tool);
    if (name === undefined) {
      const offered = ctx.turn.tools.map((t) => t.name).join(", ");
      throw new Error(`the client offered no tool for "${tool}" (offered: ${offered})`);
    }
    return { kind: "tool", name, args: typeof args === "function" ? args(ctx) : args };
  };
}

export function say(text: string): Step {
  return () => ({ kind: "text", text });
}

/** The step for this turn: one per result received; past the end, the model ends its turn. */
export function stepFor(steps: Step[], turn: Turn): Reply {
  const step = steps[turn.results.length];
  if (step === undefined) return { kind: "text", text: "All done." };
  return step(contextOf(turn));
}
