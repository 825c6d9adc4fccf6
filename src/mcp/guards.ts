// Agent-misuse guards: bare sleeps, duplicate active commands, and MCP wording for the service's errors.
import path from "node:path";
import { AwaitlessError, invalid } from "../core/errors.ts";
import type { JobServiceApi, JobStatus, LaunchRequest } from "../core/service-types.ts";

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

function sameTarget(job: JobStatus, req: LaunchRequest, cwd: string): boolean {
  return (
    job.cwd === cwd &&
    job.backend === (req.backend ?? job.backend) &&
    (job.host ?? undefined) === req.host &&
    job.argv.length === req.argv.length &&
    job.argv.every((arg, i) => arg === req.argv[i])
  );
}

/**
 * Refuses to launch a command identical (argv, cwd, backend, host) to an active job, unless
 * `allow_duplicate` is set or the request is a retry of that job's own `client_request_id`.
 */
export async function assertNoActiveDuplicate(service: JobServiceApi, req: LaunchRequest): Promise<void> {
  if (req.allow_duplicate) return;
  if ((req.backend ?? "local") !== "local" || req.host !== undefined) {
    // Remote cwd defaults are resolved by the backend; the service's own check covers those targets.
    return;
  }
  const cwd = path.resolve(req.cwd ?? process.cwd());
  const active = await service.list({ state: "active", limit: 500 });
  const twin = active.find((job) => job.backend === "local" && sameTarget(job, req, cwd));
  if (twin === undefined) return;
  if (req.client_request_id !== undefined && twin.client_request_id === req.client_request_id) return;
  throw duplicateError(twin.job_id, twin.state, cwd, req.argv);
}

function duplicateError(jobId: string, state: string, cwd: string, argv: string[]): AwaitlessError {
  return new AwaitlessError(
    "duplicate_active_job",
    `The same command is already ${state} as job ${jobId} in ${cwd}: ${JSON.stringify(argv)}.`,
    `Call wait_for_job with {"job_id":"${jobId}"} to get its result instead of starting it twice; ` +
      "pass allow_duplicate: true only if you really need a second copy running at the same time.",
    { job_id: jobId },
  );
}

/** Rewrites service error hints into MCP terms (tools instead of CLI commands). */
export function mcpError(error: unknown): unknown {
  if (!(error instanceof AwaitlessError)) return error;
  if (error.code === "not_found") {
    return new AwaitlessError(
      error.code,
      error.message,
      "Check the job ID (it looks like job_01J…); call list_jobs to see recent jobs and their IDs.",
      error.details,
    );
  }
  if (error.code === "duplicate_active_job") {
    const jobId = typeof error.details.job_id === "string" ? error.details.job_id : undefined;
    if (jobId !== undefined && !error.hint.includes("wait_for_job")) {
      return new AwaitlessError(
        error.code,
        error.message,
        `Call wait_for_job with {"job_id":"${jobId}"} to get its result; pass allow_duplicate: true only if you need a second copy.`,
        error.details,
      );
    }
  }
  return error;
}
