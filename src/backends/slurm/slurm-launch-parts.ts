// What a single job's sbatch and an array's share: the job's directory on the cluster and its sbatch options.
import type { Job } from "../../core/model/job.ts";
import { attemptOf, attemptSuffix } from "../../core/retries/retry-policy.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { formatSlurmTime, mergeSlurmOptions } from "./slurm-options.ts";

/** The job's directory under the cluster's prepared root, as the launch names it (an attempt's under attempts/N). */
export function clusterDirIn(root: string, job: Job): string {
  return `${root}/jobs/${job.job_id}${attemptSuffix(attemptOf(job))}`;
}

/** The host's default options overlaid with the job's; Slurm's time limit behind the job's --timeout. */
export function sbatchOptionsFor(h: SlurmHost, job: Job, graceSeconds: number): Record<string, string> {
  const options = mergeSlurmOptions(
    h.settings.defaults,
    job.spec.slurm_options,
    `[hosts.${h.name}.slurm] option`,
  );
  const timeout = job.spec.timeout_seconds;
  // the wrapper enforces --timeout exactly; Slurm's limit sits behind it so the wrapper's record names the timeout
  if (timeout && job.spec.slurm_options.time === undefined)
    options.time = formatSlurmTime(timeout + graceSeconds + 60);
  return options;
}
