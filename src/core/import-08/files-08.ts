// The files of an Awaitless 0.8 data directory read as hostile input: the directory under the trusted-directory
// rule, a job's logs only from <source>/jobs/<ID>/ as regular files opened without following a link.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  type Stats,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { AwaitlessError } from "../model/errors.ts";
import { JOB_ID_08_RE } from "../model/ids.ts";
import { assertTrustedDir } from "../util/trusted-dir.ts";

const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const FRESH = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Refuses an 0.8 data directory another user could have filled: the trusted-directory rule (it and every ancestor
 * ours or root's, not writable by others unless sticky), and the directory itself not writable by anyone else even
 * when sticky (in a sticky directory others can still create entries such as a database).
 */
export function assertTrustedSource(dir: string, what: string): void {
  assertTrustedDir(dir, what, "invalid_argument");
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return; // missing: the caller says there is no store there
  }
  if ((st.mode & 0o022) !== 0) {
    throw new AwaitlessError(
      "invalid_argument",
      `refusing ${what} ${dir}: it is writable by ${(st.mode & 0o002) !== 0 ? "other users" : "its group"}, so another user could have put files there`,
      `run chmod go-w ${dir}, or copy the store to a directory only you can write to`,
      { directory: dir },
    );
  }
}

/**
 * Opens `path` for reading when it is a regular file reached without a link at its last component, and not a hard
 * link (one name only: 0.8 never made a second one, and a second name could be another file of the user's); else
 * null. O_NONBLOCK: a FIFO planted in its place never blocks the open.
 */
function openRegular(path: string): { fd: number; size: number } | null {
  let fd: number;
  try {
    fd = openSync(path, READ);
  } catch {
    return null;
  }
  const st = fstatSync(fd);
  if (!st.isFile() || st.nlink !== 1) {
    closeSync(fd);
    return null;
  }
  return { fd, size: st.size };
}

function copyFd(from: number, to: string): number {
  const out = openSync(to, FRESH, 0o600);
  let total = 0;
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = readSync(from, buf, 0, buf.length, null);
      if (n <= 0) break;
      for (let off = 0; off < n; ) off += writeSync(out, buf, off, n - off);
      total += n;
    }
  } finally {
    closeSync(out);
  }
  return total;
}

/** Copies the regular file `from` (never through a link) to a new 0600 file `to`; throws when it is anything else. */
export function copySourceFile(from: string, to: string): void {
  const f = openRegular(from);
  if (f === null)
    throw new Error(`${from} is not a regular file (a link, a directory or a device is not read)`);
  try {
    copyFd(f.fd, to);
  } finally {
    closeSync(f.fd);
  }
}

/** Why a directory on the way to a job's logs is not used, or null when it is a plain directory of ours or root's. */
function dirRefusal(path: string): string | null {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return "missing";
  }
  if (st.isSymbolicLink()) return `${path} is a symbolic link`;
  if (!st.isDirectory()) return `${path} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid && st.uid !== 0) return `${path} is owned by another user`;
  if ((st.mode & 0o022) !== 0) return `${path} is writable by others`;
  return null;
}

/** The only place an 0.8 job's stream is read from: `<source>/jobs/<ID>/<stream>.log`. */
export function log08Path(source: string, jobId: string, stream: "stdout" | "stderr"): string {
  return join(source, "jobs", jobId, `${stream}.log`);
}

/**
 * Opens 0.8 job `jobId`'s `stream` log in `source` for reading: only `<source>/jobs/<ID>/<stream>.log`, the ID 0.8's
 * pattern, `jobs/` and `jobs/<ID>/` plain directories (no link) of ours or root's and not writable by others, the
 * file regular and opened without following a link. The descriptor, or why there is none.
 */
export function open08Log(
  source: string,
  jobId: string,
  stream: "stdout" | "stderr",
): { fd: number; size: number } | { missing: string } {
  if (!JOB_ID_08_RE.test(jobId)) return { missing: "not an Awaitless 0.8 job ID" };
  for (const d of [join(source, "jobs"), join(source, "jobs", jobId)]) {
    const why = dirRefusal(d);
    if (why !== null) return { missing: why };
  }
  const path = log08Path(source, jobId, stream);
  const f = openRegular(path);
  return f ?? { missing: `${path} is missing or not a regular file` };
}

/** Copies 0.8 job `jobId`'s `stream` log (open08Log's rules) to a new 0600 file `target`: true when copied. */
export function copy08Log(
  source: string,
  jobId: string,
  stream: "stdout" | "stderr",
  target: string,
): boolean {
  const f = open08Log(source, jobId, stream);
  if ("missing" in f) return false;
  try {
    copyFd(f.fd, target);
    return true;
  } finally {
    closeSync(f.fd);
  }
}
