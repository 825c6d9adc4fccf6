// The cgroups a job's wrapper made on this machine (its `started` record names them): removed with the job (gc); and
// the kernel's wait before a job's first move between cgroups, started by the launch (primeCgroupMoves).
import { accessSync, constants, existsSync, readFileSync, rmdirSync } from "node:fs";
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

let primePath: string | null | undefined;

/**
 * Starts, without waiting for it, the wait the kernel makes before the first move between cgroups after a quiet spell
 * (an RCU grace period, 5–25 ms on a two-core machine), so that it is over or nearly so when the job's command joins
 * its cgroups a few process starts later: the wrapper does the same (awl_track_prime in src/wrapper/tracking.sh), but
 * only once its shell has read its script and spec.sh, some milliseconds after the launch. It writes 0 (the writer
 * itself: a move to where this process already is, which changes nothing) to the cgroup.procs of this process's own
 * cgroup, v2 first, else v1 `memory`, as the wrapper would; the write runs on the runtime's I/O threads, so nothing
 * here waits for it. Not when jobs are tracked by environment (AWAITLESS_TRACKING=environment), nor where that file
 * cannot be written (not root, no delegated cgroup): looked up once per process. True when a write was started: the
 * launch then tells its wrapper (AWL_LAUNCH_PRIMED=1), which skips its own.
 */
export function primeCgroupMoves(): boolean {
  if (process.env.AWAITLESS_TRACKING === "environment") return false;
  if (primePath === undefined) primePath = ownCgroupProcs();
  if (primePath === null) return false;
  // node:fs/promises on first use (it costs a command that launches nothing, e.g. a status, half a millisecond)
  const { writeFile } = require("node:fs/promises") as typeof import("node:fs/promises");
  writeFile(primePath, "0\n").catch(() => {
    primePath = null;
  });
  return true;
}

/** The writable cgroup.procs of this process's own cgroup (v2, else v1 `memory`), or null. */
export function ownCgroupProcs(): string | null {
  let lines: string[];
  try {
    lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
  } catch {
    return null;
  }
  const v2Mount = existsSync("/sys/fs/cgroup/cgroup.controllers")
    ? "/sys/fs/cgroup"
    : existsSync("/sys/fs/cgroup/unified/cgroup.controllers")
      ? "/sys/fs/cgroup/unified"
      : null;
  const candidates: string[] = [];
  for (const line of lines) {
    const m = /^\d+:([^:]*):(\/.*)$/.exec(line);
    if (!m) continue;
    const [, controllers = "", path = "/"] = m;
    if (controllers === "" && v2Mount) candidates.unshift(join(v2Mount, path, "cgroup.procs"));
    else if (controllers.split(",").includes("memory") && v2Mount !== "/sys/fs/cgroup")
      candidates.push(join("/sys/fs/cgroup/memory", path, "cgroup.procs"));
  }
  for (const file of candidates) {
    try {
      accessSync(file, constants.W_OK);
      return file;
    } catch {
      // not ours to write: the next, else none
    }
  }
  return null;
}
