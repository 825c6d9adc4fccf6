// Automatic gc: when `auto_gc_interval_hours` have passed since the last one, a launch (CLI run/submit) or the
// MCP server starts `awaitless gc` with the configured retention and quota as a detached background process, so
// the store stays bounded without anyone running gc and without a launch waiting for it.
import { spawn } from "node:child_process";
import type { Ctx } from "./cli/commands.ts";
import { selfArgv } from "./self.ts";

/** Starts the background gc when it is due; returns its pid, or null when it was not due (or is switched off). */
export function startAutoGcIfDue(ctx: Ctx): number | null {
  const hours = ctx.config.defaults.auto_gc_interval_hours;
  if (!(hours > 0)) return null;
  try {
    if (!ctx.service.store.claimAutoGc(hours * 3600)) return null;
    const [cmd, ...pre] = selfArgv();
    // Same config file and store as this process; cwd "/" so that the child pins no directory of the caller.
    const config = ctx.config.path ? ["--config", ctx.config.path] : [];
    const child = spawn(cmd!, [...pre, "gc", ...config], {
      cwd: "/",
      detached: true,
      stdio: "ignore",
      env: { ...process.env, AWAITLESS_DATA_DIR: ctx.config.dataDir },
    });
    child.on("error", () => undefined);
    child.unref();
    if (child.pid === undefined) return null;
    ctx.service.store.setMeta("auto_gc_pid", String(child.pid));
    return child.pid;
  } catch {
    // Housekeeping never fails the command that triggered it; `awaitless gc` reports its own errors.
    return null;
  }
}
