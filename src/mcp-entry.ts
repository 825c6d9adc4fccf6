// Starts the MCP stdio server (loaded lazily: plain CLI commands never load the MCP SDK).
import { startAutoGcIfDue } from "./auto-gc.ts";
import type { Ctx } from "./context.ts";
import { invalid } from "./core/model/errors.ts";
import { applyMcpEnv, resolveMcpConfig } from "./mcp/config.ts";
import { runMcpStdio } from "./mcp/stdio.ts";
import { VERSION } from "./version.ts";

/** `--hold-seconds N` in ms (null when absent); refused unless a number of seconds from 1 to 86 400. */
export function parseHoldSeconds(raw: unknown): number | null {
  if (raw === undefined) return null;
  const seconds = Number(raw);
  if (typeof raw === "boolean" || !Number.isFinite(seconds) || seconds < 1 || seconds > 86_400)
    throw invalid(
      `--hold-seconds ${JSON.stringify(raw)} is not a number of seconds from 1 to 86400`,
      "pass the longest a held call may stay open, e.g. `awaitless mcp --hold-seconds 110`",
    );
  return Math.round(seconds * 1000);
}

export async function startMcp(ctx: Ctx, holdPinnedMs: number | null = null): Promise<void> {
  const d = ctx.config.defaults;
  const config = applyMcpEnv(
    resolveMcpConfig({
      inlineWindowMs: d.inline_timeout_seconds * 1000,
      holdBudgetMs: d.hold_budget_seconds * 1000,
      holdBudgetPinnedMs: holdPinnedMs,
      holdBudgetByClientMs: Object.fromEntries(
        Object.entries(d.hold_budget_by_client_seconds).map(([name, s]) => [name, s * 1000]),
      ),
      progressIntervalMs: d.progress_interval_seconds * 1000,
      taskTtlMs: d.task_ttl_seconds * 1000,
      taskPollIntervalMs: d.task_poll_interval_seconds * 1000,
      maxReturnBytes: d.max_return_bytes,
      serverVersion: VERSION,
    }),
    process.env,
  );
  // A server may live for days: the automatic gc is checked at start and then hourly (it runs as its own process).
  startAutoGcIfDue(ctx);
  setInterval(() => startAutoGcIfDue(ctx), 3_600_000).unref();
  await runMcpStdio(ctx.service, config);
}
