// Writes into a job directory that never follow a symlink there (its files are untrusted input): a fresh name
// opened with O_CREAT|O_EXCL|O_NOFOLLOW, then renamed over the target (rename replaces a symlink, never its target).

import { closeSync, constants, lstatSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";

const FRESH = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW;

/** Creates `path` holding `data`; fails (EEXIST) when anything, a symlink included, is there already. */
export function writeFresh(path: string, data: string | Uint8Array, mode: number): void {
  const fd = openSync(path, FRESH, mode);
  try {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}

/** Replaces `path` with a file holding `data` (fresh temp name, then rename); refuses a directory at `path`. */
export function replaceFile(path: string, data: string | Uint8Array, mode: number): void {
  try {
    if (lstatSync(path).isDirectory()) throw new Error(`${path} is a directory; not replacing it`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
  writeFresh(tmp, data, mode);
  try {
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
}

/** Opens `path` for appending (created when missing); fails (ELOOP) when it is a symlink. */
export function openAppend(path: string, mode: number): number {
  return openSync(path, APPEND, mode);
}
