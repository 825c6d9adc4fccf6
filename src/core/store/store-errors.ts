// How SQLite failures reach the user: what failed with which file, and what to do (nothing was changed); a full
// disk is recognised by util/no-space.ts.
import { dirname } from "node:path";
import { AwaitlessError } from "../model/errors.ts";
import { freeSpace, isNoSpace, noSpaceError } from "../util/no-space.ts";

function codeOf(e: unknown): string {
  return String((e as { code?: unknown })?.code ?? "");
}

export function isBusy(e: unknown): boolean {
  const msg = String((e as { message?: string })?.message ?? e);
  return /SQLITE_BUSY|database is locked/i.test(msg);
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
