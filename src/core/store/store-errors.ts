// How SQLite and file-system failures reach the user: what failed with which file, and what to do (nothing was
// changed). A full disk or a spent quota (ENOSPC, EDQUOT, SQLITE_FULL) is recognised here and nowhere else.
import { statfsSync } from "node:fs";
import { dirname } from "node:path";
import { AwaitlessError, hint } from "../model/errors.ts";
import { humanBytes } from "../util/text.ts";

const NO_SPACE_RE = /SQLITE_FULL|database or disk is full|ENOSPC|EDQUOT|no space left|quota exceeded/i;

function codeOf(e: unknown): string {
  return String((e as { code?: unknown })?.code ?? "");
}

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

export function isBusy(e: unknown): boolean {
  const msg = String((e as { message?: string })?.message ?? e);
  return /SQLITE_BUSY|database is locked/i.test(msg);
}

/** A raw file-system ENOSPC/EDQUOT (e.g. from writeFileSync) as the no-space error naming its directory; else null. */
export function noSpaceFromErrno(e: unknown): AwaitlessError | null {
  if (e instanceof AwaitlessError || !isNoSpace(e)) return null;
  const path = (e as { path?: unknown }).path;
  return typeof path === "string" ? noSpaceError(dirname(path), path, e) : noSpaceError(".", "a file", e);
}

export function storeError(path: string, e: unknown): AwaitlessError {
  const msg = String((e as { message?: string })?.message ?? e);
  if (isNoSpace(e) || (/SQLITE_IOERR/.test(codeOf(e)) && (freeSpace(path)?.free ?? 1) < 64 * 1024)) {
    // SQLite says "disk I/O error" when the shared-memory index cannot grow on a full disk.
    return noSpaceError(dirname(path), `the job database ${path}`, e);
  }
  if (isBusy(e)) {
    return new AwaitlessError(
      "store_unavailable",
      `the job database ${path} stayed locked by another process`,
      "retry in a moment; if it persists, find the process holding it (fuser) — no data was changed",
      {},
      e,
    );
  }
  if (/not a database|malformed|corrupt/i.test(msg)) {
    return new AwaitlessError(
      "store_unavailable",
      `the job database ${path} is damaged (${msg})`,
      `keep the file for recovery (do not delete it), move it aside (mv ${path} ${path}.bad) to start fresh, or try \`sqlite3 ${path} .recover\``,
      {},
      e,
    );
  }
  if (/readonly|permission|unable to open|EACCES/i.test(msg)) {
    return new AwaitlessError(
      "store_unavailable",
      `cannot write the job database ${path} (${msg})`,
      "make the data directory writable by you, or set AWAITLESS_DATA_DIR to one that is",
      {},
      e,
    );
  }
  return new AwaitlessError(
    "internal",
    `job database error at ${path}: ${msg}`,
    "report this with the command you ran",
    {},
    e,
  );
}
