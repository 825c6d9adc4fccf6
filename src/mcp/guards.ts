// Agent-misuse guards: bare sleeps here; duplicates come from the service and get MCP wording (tools, not CLI).
import path from "node:path";
import { AwaitlessError, invalid } from "../core/errors.ts";
import { noSpaceFromErrno } from "../core/store-errors.ts";

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ash", "ksh"]);
const SLEEP_SCRIPT = /^\s*(?:exec\s+)?sleep(?:\s+(?:[\d.]+[smhd]?|infinity))+\s*;?\s*$/;
const DURATION = /^(?:[\d.]+[smhd]?|infinity)$/;

/** A command whose only effect is to sleep: `sleep 30`, `sh -c "sleep 30"`. */
export function isBareSleep(argv: string[]): boolean {
  const [program, ...args] = argv;
  if (program === undefined) return false;
  const name = path.basename(program);
  if (name === "sleep") return args.length > 0 && args.every((arg) => DURATION.test(arg));
  if (SHELLS.has(name) && args.length === 2 && args[0] === "-c") return SLEEP_SCRIPT.test(args[1] ?? "");
  return false;
}

export function assertNotBareSleep(argv: string[]): void {
  if (!isBareSleep(argv)) return;
  throw invalid(
    `command ${JSON.stringify(argv)} only sleeps; a job that sleeps does not wait for anything.`,
    "To wait for a job, use wait_for_job with its job_id (it returns the moment the job finishes); " +
      "for several jobs use wait_for_completions. No sleeping or polling is needed.",
    { argv },
  );
}

function duplicateHint(jobId: string): string {
  return (
    `Call wait_for_job with {"job_id":"${jobId}"} to get its result instead of starting it twice; ` +
    "pass allow_duplicate: true only if you really need a second copy running at the same time."
  );
}

/** Rewrites service error hints into MCP terms (tools instead of CLI commands). */
export function mcpError(error: unknown): unknown {
  if (!(error instanceof AwaitlessError)) return noSpaceFromErrno(error) ?? error;
  if (error.code === "no_space") {
    return new AwaitlessError(
      error.code,
      error.message,
      "Nothing was created. Tell the user that this disk or quota is full: removing finished jobs (Awaitless gc), a smaller log_cap_bytes in the config, or a data directory on a larger file system makes room; then call the tool again.",
      error.details,
    );
  }
  if (error.code === "not_found") {
    return new AwaitlessError(
      error.code,
      error.message,
      "Check the job ID (it looks like job_01J…); call list_jobs to see recent jobs and their IDs.",
      error.details,
    );
  }
  if (error.code === "duplicate_active_job") {
    // The service refuses an identical active command (same argv, cwd, target) for every surface.
    const jobId = typeof error.details.job_id === "string" ? error.details.job_id : undefined;
    if (jobId !== undefined)
      return new AwaitlessError(error.code, error.message, duplicateHint(jobId), error.details);
  }
  return error;
}
