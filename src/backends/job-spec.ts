// One job's spec.sh text (the `# secret_env:` line + renderSpec of Job + LaunchInput) and its 0600 local copy.
import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LaunchInput } from "../core/backend/backend.ts";
import { AwaitlessError } from "../core/model/errors.ts";
import type { Job } from "../core/model/job.ts";
import { renderSpec } from "../wrapper/protocol.ts";
import { replaceFile } from "../wrapper/safe-files.ts";
import { parseSpecSecrets } from "./local/spec-secrets.ts";

export interface JobSpecOptions {
  tickSeconds: number;
  heartbeatSeconds: number;
  /** The command's directory as the target sees it (Slurm resolves it against the cluster home); default job.spec.cwd. */
  cwd?: string;
  /** The target's queue directory; required when the launch has an admission. */
  admissionDir?: string;
  /** Lock mechanism of a new queue directory (tests force mkdir); default auto. */
  admissionLock?: "auto" | "mkdir";
  /** Set by the Slurm backend: the wrapper runs as the batch script and Slurm signals the job. */
  scheduler?: "slurm";
}

/**
 * The text of the job's spec.sh: a `# secret_env: NAMES` line (read back for redaction) then the rendered spec,
 * with secret values exported to the command. Throws AwaitlessError(invalid_argument) on input the wrapper cannot
 * honour, and when the launch asks for admission but the backend gave no queue directory.
 */
export function jobSpecText(job: Job, input: LaunchInput, opts: JobSpecOptions): string {
  if (input.admission && opts.admissionDir === undefined) {
    throw new AwaitlessError(
      "invalid_argument",
      `job ${job.job_id} asks for a queue or resources, but the ${job.backend} backend gave no queue directory`,
      "drop --queue/--resource for this backend",
    );
  }
  const spec = renderSpec({
    jobId: job.job_id,
    cwd: opts.cwd ?? job.spec.cwd,
    argv: job.spec.argv,
    env: { ...job.spec.env, ...input.secretValues },
    timeoutSeconds: Math.ceil(job.spec.timeout_seconds ?? 0),
    graceSeconds: Math.ceil(input.graceSeconds),
    tickSeconds: opts.tickSeconds,
    heartbeatSeconds: opts.heartbeatSeconds,
    logCapBytes: input.logCapBytes,
    ...(opts.scheduler ? { scheduler: opts.scheduler } : {}),
    ...(job.spec.keep_leftovers ? { keepLeftovers: true } : {}),
    ...(job.spec.retry
      ? {
          retry: {
            attempt: job.attempt ?? 1,
            left: Math.max(0, job.spec.retry.retries + 1 - (job.attempt ?? 1)),
            on: job.spec.retry.on,
          },
        }
      : {}),
    // Slurm waits for its parents itself (sbatch --dependency); a wrapper waits on local and SSH targets.
    ...(input.after && opts.scheduler !== "slurm" ? { after: input.after } : {}),
    ...(input.admission && opts.admissionDir !== undefined
      ? {
          admission: {
            ...input.admission,
            dir: opts.admissionDir,
            lock: opts.admissionLock ?? "auto",
          },
        }
      : {}),
  });
  return `# secret_env: ${job.spec.secret_env.join(" ")}\n${spec}`;
}

/** Writes `text` as the job's local spec.sh (0600, in a 0700 job directory created when missing). */
export function writeLocalSpec(jobDir: string, text: string): void {
  mkdirSync(jobDir, { recursive: true, mode: 0o700 });
  replaceFile(join(jobDir, "spec.sh"), text, 0o600);
}

/** Certainly absent (ENOENT, also below a missing directory); any other failure to look is not certainty. */
export function isMissing(path: string): boolean {
  try {
    lstatSync(path);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** Every backend's launch writes the local spec.sh before anything else: without it, nothing was launched. */
export function localSpecMissing(jobDir: string): boolean {
  return isMissing(join(jobDir, "spec.sh"));
}

/** The job's secret_env values, read back from its local spec.sh (0600), which every launch writes first. */
export function localSecretValues(job: Job): Record<string, string> {
  if (job.spec.secret_env.length === 0) return {};
  try {
    return parseSpecSecrets(readFileSync(join(job.job_dir, "spec.sh"), "utf8"), job.spec.secret_env);
  } catch {
    return {};
  }
}
