// A full disk or a spent quota (ENOSPC, EDQUOT, SQLITE_FULL), recognised here and nowhere else: what a write that
// found no space tells the user (which directory, its free space, the ways out).
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { AwaitlessError, hint } from "../model/errors.ts";
import { humanBytes } from "./text.ts";

const NO_SPACE_RE = /SQLITE_FULL|database or disk is full|ENOSPC|EDQUOT|no space left|quota exceeded/i;

/** Is this a full disk or a spent quota, from SQLite (SQLITE_FULL) or the file system (ENOSPC, EDQUOT)? */
export function isNoSpace(e: unknown): boolean {
  if (e instanceof AwaitlessError) return e.code === "no_space";
  const code = (e as { code?: unknown })?.code;
  if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") return true;
  return NO_SPACE_RE.test(String((e as { message?: string })?.message ?? e));
}

/** Free bytes (for this user) and size of the file system holding `path` or its nearest existing parent. */
export function freeSpace(path: string): { free: number; size: number; noInodes: boolean } | null {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = statfsSync(p);
      return { free: s.bavail * s.bsize, size: s.blocks * s.bsize, noInodes: s.files > 0 && s.ffree === 0 };
    } catch {
      if (dirname(p) === p) return null;
    }
  }
}

/** "1.2 MiB free of 3.0 MiB" (the file system's view; a quota can be smaller), ", no free inodes" when so. */
export function describeFree(path: string): string {
  const f = freeSpace(path);
  if (!f) return "free space unknown";
  return `${humanBytes(f.free)} free of ${humanBytes(f.size)}${f.noInodes ? ", no free inodes" : ""}`;
}

/**
 * The error for a write that found no space: names the directory, its free space and the ways out. `what` is what
 * could not be written ("the job database", "the job directory …"). Nothing was created.
 */
export function noSpaceError(
  dir: string,
  what: string,
  e: unknown,
  remote?: { host: string; free: string },
): AwaitlessError {
  const cause = String((e as { message?: string })?.message ?? e);
  const where = remote ? `${remote.host}:${dir}` : dir;
  const free = remote ? remote.free : describeFree(dir);
  return new AwaitlessError(
    "no_space",
    `no space left in ${where} (${free}; disk full or quota exceeded): could not write ${what} (${cause})`,
    remote ? hint("free_space_remote", { host: remote.host }) : hint("free_space_local"),
    remote ? { directory: dir, host: remote.host } : { directory: dir },
    e,
  );
}

/** A raw file-system ENOSPC/EDQUOT (e.g. from writeFileSync) as the no-space error naming its directory; else null. */
export function noSpaceFromErrno(e: unknown): AwaitlessError | null {
  if (e instanceof AwaitlessError || !isNoSpace(e)) return null;
  const path = (e as { path?: unknown }).path;
  return typeof path === "string" ? noSpaceError(dirname(path), path, e) : noSpaceError(".", "a file", e);
}
