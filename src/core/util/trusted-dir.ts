// Which local directories may hold jobs: each one, and every ancestor, owned by us or root and not writable by
// others (unless sticky), following symbolic links component by component; and the safe creation of a job directory.
import { lstatSync, mkdirSync, readlinkSync, type Stats } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { AwaitlessError, type ErrorCode } from "../model/errors.ts";

const STICKY = 0o1000;
const SO = "so another user could replace what awaitless runs there";

/** Why `st` (of `path`) could be changed by someone other than us or root, or null when it cannot. */
function untrustedReason(path: string, st: Stats, uid: number): { why: string; fix: string } | null {
  if (st.uid !== uid && st.uid !== 0) {
    return {
      why: `${path} is owned by another user (uid ${st.uid}), ${SO}`,
      fix: "choose a directory you own",
    };
  }
  if (st.isSymbolicLink()) return null; // a link's own mode means nothing; its target is checked next
  if ((st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0) {
    return {
      why: `${path} is writable by ${(st.mode & 0o002) !== 0 ? "other users" : "its group"} and not sticky, ${SO}`,
      fix: `run chmod go-w ${path}, or choose a directory you own`,
    };
  }
  return null;
}

/**
 * Throws unless `path` and every ancestor are owned by us or root and not group/other-writable (a sticky directory
 * such as /tmp may be). Symbolic links on the way are followed one at a time, and the link itself must be ours or
 * root's. Components that do not exist yet are skipped (they will be created by us, 0700). `what` names the
 * directory in the message ("the data directory", "--log-dir"). Does nothing when not on a POSIX system. True when
 * the whole path existed (so all of it was checked).
 */
export function assertTrustedDir(path: string, what: string, code: ErrorCode = "invalid_argument"): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  let current = "/";
  const parts = resolve(path).split("/").filter(Boolean);
  check(current, look(current));
  for (let i = 0, hops = 0; i < parts.length; i++) {
    const next = join(current, parts[i]!);
    const st = look(next);
    if (st === null) return false; // the rest is made by us
    check(next, st);
    if (st.isSymbolicLink()) {
      if (++hops > 40) refuse(`${next}: too many symbolic links`, "choose a directory without a link loop");
      // Resolve the link and walk its target from the top, then go on with the remaining components.
      const target = resolve(dirname(next), readlinkSync(next));
      parts.splice(0, i + 1, ...target.split("/").filter(Boolean));
      current = "/";
      i = -1;
      continue;
    }
    if (!st.isDirectory()) refuse(`${next} is not a directory`, "choose a directory path, not a file");
    current = next;
  }
  return true;

  function look(p: string): Stats | null {
    try {
      return lstatOrNull(p);
    } catch (e) {
      return refuse(`${p} cannot be inspected (${(e as Error).message})`, "choose a directory you own");
    }
  }
  function check(p: string, st: Stats | null): void {
    if (st === null) return;
    const r = untrustedReason(p, st, uid!);
    if (r) refuse(r.why, r.fix);
  }
  function refuse(why: string, fix: string): never {
    throw new AwaitlessError(code, `refusing ${what} ${path}: ${why}`, fix, { directory: path });
  }
}

/** lstat of `p`, or null when it (or a directory on the way) does not exist; other errors are thrown. */
export function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

/**
 * Creates `dir` (0700) without following a link at its last component, then checks that what is there is our own
 * 0700 directory (an earlier launch of the same job may have made it). Call it in a trusted parent: there nobody
 * else can swap the entry afterwards. Throws an AwaitlessError when the entry is anything else.
 */
export function makeOwnDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
    throw new AwaitlessError(
      "launch_failed",
      `the job directory ${dir} is not our own 0700 directory (a link, another user's, or open to others)`,
      "remove it, or choose a log directory that only you can write to",
      { directory: dir },
    );
  }
}
