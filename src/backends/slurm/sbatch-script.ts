// Owns the batch script text sent to `sbatch --parsable` on stdin: tags, batch-shell log files, resources, exec of the wrapper. Pure.
import { AwaitlessError } from "../../core/model/errors.ts";
import { type SlurmOptions, slurmOptionArgs, validateSlurmOptions } from "./slurm-options.ts";

/** Files in the job directory that catch the batch shell's own output (Slurm's kill notices land here). */
export const SBATCH_STDOUT_FILE = "slurm-batch.out";
export const SBATCH_STDERR_FILE = "slurm-batch.err";
/** Prefix of the `--comment` tag; the full tag is `awaitless:<job_id>`. */
export const SLURM_COMMENT_PREFIX = "awaitless:";

export interface SbatchScriptInput {
  /** Our job ID (`job_` + ULID); tags the Slurm job through its name and comment. */
  jobId: string;
  /** The user's job name, if any; sanitised into the Slurm job name ahead of the job ID. */
  jobName?: string;
  /** Absolute job directory on the cluster, visible from compute nodes (holds the wrapper's files). */
  slurmJobDir: string;
  /** Absolute path of wrapper.sh on the cluster. */
  wrapperPath: string;
  /** Merged, validated resources (host defaults + per-job overrides). */
  options: SlurmOptions;
  /** sbatch --dependency for parents on the same cluster (slurmDependency in src/backends/slurm/slurm-dependency.ts). */
  dependency?: string;
  /** sbatch --hold: a client releases it (a :failed/:any parent with retries ended; slurm-dependency.ts). */
  hold?: boolean;
  /**
   * A job array (one chunk of ours): `--array=INDICES%N`; slurmJobDir is then the chunk's directory, which holds one
   * link per Slurm task ID to that task's job directory: the script runs the wrapper in the one SLURM_ARRAY_TASK_ID names.
   */
  array?: { taskIds: string; throttle?: number };
}

// a job ID, or for a retried job's attempt N ≥ 2 job_….N (src/core/retries/retry-policy.ts attemptKey), or an array chunk's tag ARRAY_ID.k
const JOB_ID = /^job_[0-9A-Za-z]{1,64}(\.[0-9]{1,5})?$/;
// Characters that survive an #SBATCH line untouched: sbatch splits those lines on blanks and
// expands %-patterns and \-escapes in --output/--error, so none of those may appear.
const SBATCH_SAFE_PATH = /^\/[A-Za-z0-9._/+@=,-]*$/;

/** The Slurm job name for our job: `<name>-<job_id>` (name sanitised, ≤ 64 chars) or `awaitless-<job_id>`. */
export function slurmJobName(jobId: string, jobName?: string): string {
  const cleaned = (jobName ?? "").replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[_.-]+|[_.-]+$/g, "");
  return `${cleaned === "" ? "awaitless" : cleaned.slice(0, 64)}-${jobId}`;
}

/** The `--comment` tag for our job. */
export function slurmCommentTag(jobId: string): string {
  return `${SLURM_COMMENT_PREFIX}${jobId}`;
}

/** POSIX single-quoting: safe for any byte string in `sh`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function checkPath(label: string, value: string, hint: string): string {
  if (!SBATCH_SAFE_PATH.test(value) || value.split("/").includes("..")) {
    throw new AwaitlessError(
      "invalid_argument",
      `The Slurm ${label} ${JSON.stringify(value)} cannot be used in a batch script.`,
      `${hint} It must be absolute and use only letters, digits and . _ / + @ = , - (no spaces, '%', quotes or '..').`,
      { path: value },
    );
  }
  return value.length > 1 ? value.replace(/\/+$/, "") : value;
}

/** A --dependency value we built: TYPE:ID[:ID…] joined by commas (all must hold), TYPE afterok|afterany|afternotok. */
export function checkDependency(dep: string): string {
  if (
    !/^(afterok|afterany|afternotok)(:[0-9]+(_[0-9]+)?)+(,(afterok|afterany|afternotok)(:[0-9]+(_[0-9]+)?)+)*$/.test(
      dep,
    )
  ) {
    throw new AwaitlessError(
      "invalid_argument",
      `Cannot render the Slurm dependency ${JSON.stringify(dep)}.`,
      "Dependencies name Slurm job IDs of the same cluster; this is a bug in the caller.",
    );
  }
  return dep;
}

/** Renders the batch script; throws invalid_argument for a bad job ID, path or option. */
export function renderSbatchScript(input: SbatchScriptInput): string {
  if (!JOB_ID.test(input.jobId)) {
    throw new AwaitlessError(
      "invalid_argument",
      `Cannot render a Slurm batch script for job ID ${JSON.stringify(input.jobId)}.`,
      "Job IDs look like job_01HZX3Y8M2Q7T0K5R9N4B6C1DE; this is a bug in the caller.",
    );
  }
  const jobDir = checkPath(
    "job directory",
    input.slurmJobDir,
    "Set slurm_job_dir for this host to a shared directory.",
  );
  const wrapper = checkPath(
    "wrapper path",
    input.wrapperPath,
    "Install the wrapper under a plain absolute path.",
  );
  const options = validateSlurmOptions(input.options as Record<string, unknown>);
  const array = input.array;
  if (array && (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(array.taskIds) || (array.throttle ?? 1) < 1)) {
    throw new AwaitlessError(
      "invalid_argument",
      `Cannot render the Slurm array ${JSON.stringify(array.taskIds)}.`,
      "Array task IDs are ranges and lists of whole numbers; this is a bug in the caller.",
    );
  }
  // an array task's batch output goes to its own job directory, through the link named by its task ID (%a)
  const out = array ? `${jobDir}/%a` : jobDir;
  const directives = [
    `--job-name=${slurmJobName(input.jobId, input.jobName)}`,
    `--comment=${slurmCommentTag(input.jobId)}`,
    `--chdir=${jobDir}`,
    `--output=${out}/${SBATCH_STDOUT_FILE}`,
    `--error=${out}/${SBATCH_STDERR_FILE}`,
    ...(array ? [`--array=${array.taskIds}${array.throttle ? `%${array.throttle}` : ""}`] : []),
    // a requeued job runs again: keep the first attempt's batch output
    "--open-mode=append",
    ...slurmOptionArgs(options),
    ...(input.dependency ? [`--dependency=${checkDependency(input.dependency)}`] : []),
    ...(input.hold ? ["--hold"] : []),
  ];
  const run = array
    ? [
        `# Awaitless array ${input.jobId}: each task's wrapper records pid, heartbeat, output and exit status in the task's job directory.`,
        `awl_dir=$(cd -P ${shellQuote(jobDir)}/"$SLURM_ARRAY_TASK_ID" && pwd) || { echo "awaitless: no task directory for array task $SLURM_ARRAY_TASK_ID in ${jobDir}" >&2; exit 126; }`,
        `exec sh ${shellQuote(wrapper)} "$awl_dir"`,
      ]
    : [
        `# Awaitless job ${input.jobId}: the wrapper records pid, heartbeat, output and exit status in the job directory.`,
        `exec sh ${shellQuote(wrapper)} ${shellQuote(jobDir)}`,
      ];
  return ["#!/bin/sh", ...directives.map((d) => `#SBATCH ${d}`), ...run, ""].join("\n");
}
