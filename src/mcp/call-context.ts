// What a request says about its caller: the 2026 envelope (client name, per-request capabilities), its hold.
import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import { holdChoiceFor } from "./config.ts";
import type { HoldContext, ProgressToken } from "./hold.ts";
import { diagnose } from "./stdio-streams.ts";
import type { CallCtx, ToolEnv } from "./tools/define.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

type Envelope = {
  "io.modelcontextprotocol/clientCapabilities"?: { extensions?: Record<string, unknown> };
  "io.modelcontextprotocol/clientInfo"?: { name?: string };
};

function envelopeOf(ctx: ServerContext): Envelope | undefined {
  return ctx.mcpReq.envelope as Envelope | undefined;
}

/** Whether this request declared the Tasks extension in its per-request capabilities (2026 envelope). */
export function requestHasTasks(ctx: ServerContext): boolean {
  return (
    envelopeOf(ctx)?.["io.modelcontextprotocol/clientCapabilities"]?.extensions?.[TASKS_EXTENSION] !==
    undefined
  );
}

/** The calling client's `clientInfo.name`: from the 2026 request envelope, else from `initialize`. */
export function clientNameOf(mcp: McpServer, ctx: ServerContext): string | undefined {
  return envelopeOf(ctx)?.["io.modelcontextprotocol/clientInfo"]?.name ?? mcp.server.getClientVersion()?.name;
}

const announced = new WeakMap<ToolEnv, Set<string>>();

/** The client's hold budget; the first call of each client name on a connection logs it (stderr) with its source. */
function announcedHold(env: ToolEnv, clientName: string | undefined): number {
  const choice = holdChoiceFor(env.config, clientName);
  const seen = announced.get(env) ?? new Set<string>();
  announced.set(env, seen);
  const key = clientName ?? "";
  if (!seen.has(key)) {
    seen.add(key);
    diagnose(
      `client ${JSON.stringify(clientName ?? "(unnamed)")}: hold budget ${choice.budgetMs / 1000}s (${choice.source})`,
    );
  }
  return choice.budgetMs;
}

export function callContext(mcp: McpServer, env: ToolEnv, ctx: ServerContext): CallCtx {
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
