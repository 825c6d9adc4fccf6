// The one check before any removal or write of a job's files (gc, the daily gc, a launch undone, import, SSH/Slurm
// removal): the path is the job's own directory, named by its ID, in a parent we keep jobs in, with no link on the way.
import { realpathSync, rmSync } from "node:fs";
import { dirname, isAbsolute, join, posix } from "node:path";
import { AwaitlessError } from "../model/errors.ts";
import { isJobId } from "../model/ids.ts";
import { lstatOrNull } from "./trusted-dir.ts";

/** Where a job's own directory may be: the parents its directory can have on this machine. */
export interface JobDirScope {
  job_id: string;
  /** `<data dir>/jobs` and `<data dir>/imported-0.8`: real directories (a link there is refused). */
  parents: readonly string[];
  /** The job's `--log-dir`, which the user named (and may reach through links of theirs). */
  logDir?: string;
}

/** The directory (under the data directory) that holds the jobs imported from Awaitless 0.8. */
export const IMPORTED_DIR = "imported-0.8";

/** The parents a job's directory may have: the data directory's jobs/ and imported-0.8/, and its --log-dir. */
export function jobDirScope(
  job: { job_id: string; spec?: { log_dir?: string } },
  dataDir: string,
): JobDirScope {
  const logDir = job.spec?.log_dir;
  return {
    job_id: job.job_id,
    parents: [join(dataDir, "jobs"), join(dataDir, IMPORTED_DIR)],
    ...(typeof logDir === "string" && isAbsolute(logDir) ? { logDir } : {}),
  };
}

/** A path the guard refused: nothing was removed or written there. */
export class JobDirRefused extends AwaitlessError {}

function refuse(dir: string, why: string): never {
  throw new JobDirRefused(
    "invalid_argument",
    `refusing to remove or write ${JSON.stringify(dir)}: ${why}`,
    "nothing was touched there: a job's files are only ever removed or written in its own directory",
    { directory: dir },
  );
}

/**
 * The directory `dir` must name: `<parent>/<job ID>`, optionally `/attempts/<N>` (a retry's later attempt). Checks
 * the text only (an absolute, normalised path whose components are the job's valid ID): the same rule on every
 * machine. Returns the first attempt's directory and its parent.
 */
export function jobDirShape(dir: string, jobId: string): { base: string; parent: string } {
  if (!isJobId(jobId)) refuse(dir, `the job ID ${JSON.stringify(jobId.slice(0, 80))} is not a job ID`);
  if (!dir.startsWith("/") || posix.normalize(dir) !== dir || dir.endsWith("/") || dir.includes("\0"))
    refuse(dir, "not an absolute, normalised path");
  const m = /^(.*)\/attempts\/([1-9][0-9]{0,5})$/.exec(dir);
  const base = m ? m[1]! : dir;
  if (posix.basename(base) !== jobId) refuse(dir, `its last component is not the job's ID ${jobId}`);
  return { base, parent: posix.dirname(base) };
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/**
 * Throws unless `dir` is the job's own directory on this machine: its shape (jobDirShape), its parent one of the
 * scope's parents by real path (the data directory's jobs/ or imported-0.8/, themselves no link; or the job's
 * --log-dir), and neither the directory, its `attempts/` nor the attempt a symbolic link. Returns false when there is nothing there
 * (no parent, or no directory): nothing to remove.
 */
export function checkJobDir(dir: string, scope: JobDirScope): boolean {
  const { base, parent } = jobDirShape(dir, scope.job_id);
  const realParent = realOrNull(parent);
  if (realParent === null) return false;
  const ours = scope.parents.find((p) => realOrNull(p) === realParent);
  if (ours !== undefined && lstatOrNull(ours)?.isSymbolicLink())
    refuse(dir, `${JSON.stringify(ours)} is a symbolic link`);
  if (ours === undefined && (scope.logDir === undefined || realOrNull(scope.logDir) !== realParent)) {
    const where = [...scope.parents, ...(scope.logDir ? [scope.logDir] : [])];
    refuse(
      dir,
      `it is not in a directory that holds jobs (${where.map((p) => JSON.stringify(p)).join(", ")})`,
    );
  }
  for (const p of base === dir ? [base] : [base, dirname(dir), dir]) {
    const st = lstatOrNull(p);
    if (st === null) return false;
    if (st.isSymbolicLink()) refuse(dir, `${JSON.stringify(p)} is a symbolic link`);
    if (!st.isDirectory()) refuse(dir, `${JSON.stringify(p)} is not a directory`);
  }
  return true;
}

/** Removes the job's own directory `dir` (recursively) after checkJobDir; nothing when it is not there. */
export function removeJobDir(dir: string, scope: JobDirScope): void {
  if (checkJobDir(dir, scope)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The host's side of the rule (LocalHost as a Slurm login node's files; remove.sh is the same in sh): `dir` has the
 * job's shape in a directory named `jobs` whose real path is its path (no link on the way), and neither the
 * directory, its `attempts/` nor the attempt is a link. Removes it; nothing when it is not there.
 */
export function removeHostJobDir(dir: string, jobId: string): void {
  const { base, parent } = jobDirShape(dir, jobId);
  if (posix.basename(parent) !== "jobs") refuse(dir, "it is not in a jobs directory");
  const real = realOrNull(parent);
  if (real === null) return;
  if (real !== parent) refuse(dir, `${JSON.stringify(parent)} is reached through a symbolic link`);
  for (const p of [base, join(base, "attempts"), dir]) {
    if (lstatOrNull(p)?.isSymbolicLink()) refuse(dir, `${JSON.stringify(p)} is a symbolic link`);
  }
  if (lstatOrNull(dir)?.isDirectory()) rmSync(dir, { recursive: true, force: true });
}
