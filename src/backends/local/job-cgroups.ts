// The cgroups a job's wrapper made on this machine (its `started` record names them): removed with the job (gc).
import { readFileSync, rmdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Removes the empty cgroups `started` in `dir` names (`cgroups=`), each only when it is named as the wrapper names
 * them (…/awaitless-JOB_ID.N, JOB_ID the directory's job): a wrapper that was killed leaves its job's cgroups behind.
 * A cgroup that still holds processes (a job that kept some running) stays: rmdir refuses it.
 */
export function dropJobCgroups(dir: string): void {
  let text: string;
  try {
    text = readFileSync(join(dir, "started"), "utf8");
  } catch {
    return;
  }
  const line = /^cgroups=(.*)$/m.exec(text)?.[1] ?? "";
  const job = jobIdOf(dir);
  for (const cg of line.split(" ")) {
    if (!isJobCgroup(cg, job)) continue;
    try {
      rmdirSync(cg);
    } catch {
      // gone already, or still in use
    }
  }
}

/** The job ID of a job directory (…/JOB_ID, or …/JOB_ID/attempts/N). */
function jobIdOf(dir: string): string {
  return /\/attempts\/\d+$/.test(dir) ? basename(dirname(dirname(dir))) : basename(dir);
}

function isJobCgroup(path: string, jobId: string): boolean {
  if (!/^\/sys\/fs\/cgroup\/[A-Za-z0-9_./:@,-]+$/.test(path) || path.includes("/../")) return false;
  const name = basename(path);
  return name.startsWith(`awaitless-${jobId}.`) && /^\d+$/.test(name.slice(`awaitless-${jobId}.`.length));
}
