// Automatic gc: when `auto_gc_interval_hours` have passed since the last one, a launch (CLI run/submit) or the
// MCP server starts `awaitless gc` with the configured retention and quota as a detached background process, so
// the store stays bounded without anyone running gc and without a launch waiting for it.
import { resolve } from "node:path";
import type { Ctx } from "./context.ts";
import { selfArgv } from "./self.ts";

/** Starts the background gc when it is due; returns its pid, or null when it was not due (or is switched off). */
export function startAutoGcIfDue(ctx: Ctx): number | null {
  const hours = ctx.config.defaults.auto_gc_interval_hours;
  if (!(hours > 0)) return null;
  try {
    if (!ctx.store.claimAutoGc(hours * 3600)) return null;
    const [cmd, ...pre] = selfArgv();
    // Same config file and store as this process, by absolute paths: the child runs in "/" so that it pins no
    // directory of the caller, and AWAITLESS_CONFIG (which wins over --config) may have been relative.
    const env: Record<string, string | undefined> = {
      ...process.env,
      AWAITLESS_DATA_DIR: resolve(ctx.config.dataDir),
    };
    if (ctx.config.path) env.AWAITLESS_CONFIG = resolve(ctx.config.path);
    // node:child_process only when the gc is due: importing it costs every command's start
    const { spawn } = require("node:child_process") as typeof import("node:child_process");
    const child = spawn(cmd!, [...pre, "gc"], { cwd: "/", detached: true, stdio: "ignore", env });
    child.on("error", () => undefined);
    child.unref();
    if (child.pid === undefined) return null;
    ctx.store.setMeta("auto_gc_pid", String(child.pid));
    return child.pid;
  } catch {
    // Housekeeping never fails the command that triggered it; `awaitless gc` reports its own errors.
    return null;
  }
}
