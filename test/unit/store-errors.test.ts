// A full disk or a spent quota, from SQLite or the file system, becomes one no_space error (CLI exit 2) that names
// the directory, its free space and the ways out; other SQLite failures keep their own messages.
import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { AwaitlessError, EXIT, useHintTable } from "../../src/core/model/errors.ts";
import { storeError } from "../../src/core/store/store-errors.ts";
import { freeSpace, isNoSpace, noSpaceFromErrno } from "../../src/core/util/no-space.ts";
import { HINTS } from "../../src/hints.ts";

useHintTable(HINTS);

function errno(code: string, message: string, path?: string): Error {
  return Object.assign(new Error(message), { code, ...(path ? { path } : {}) });
}

describe("no space", () => {
  test("ENOSPC, EDQUOT and SQLITE_FULL are a full disk; other failures are not", () => {
    expect(isNoSpace(errno("ENOSPC", "ENOSPC: no space left on device, write"))).toBe(true);
    expect(isNoSpace(errno("EDQUOT", "EDQUOT: disk quota exceeded, write"))).toBe(true);
    expect(isNoSpace(errno("SQLITE_FULL", "database or disk is full"))).toBe(true);
    expect(isNoSpace("tr: write error: No space left on device")).toBe(true);
    expect(isNoSpace(errno("EACCES", "EACCES: permission denied"))).toBe(false);
    expect(isNoSpace(errno("SQLITE_BUSY", "database is locked"))).toBe(false);
  });

  test("a full store is no_space, exit 2, naming the directory, its free space and the fixes", () => {
    const dir = tmpdir();
    const e = storeError(`${dir}/awaitless.db`, errno("SQLITE_FULL", "database or disk is full"));
    expect(e.code).toBe("no_space");
    expect(e.exitCode).toBe(EXIT.usage);
    expect(e.message).toContain(`no space left in ${dir} (`);
    expect(e.message).toMatch(/[0-9.]+ (B|KiB|MiB|GiB|TiB) free of /);
    expect(e.hint).toContain("awaitless gc");
    expect(e.hint).toContain("log_cap_bytes");
    expect(e.hint).toContain("--log-dir");
    expect(e.hint).not.toContain("report this");
    expect(isNoSpace(e)).toBe(true);
  });

  test("a raw ENOSPC from a file write names that file's directory; anything else is left alone", () => {
    const e = noSpaceFromErrno(errno("ENOSPC", "ENOSPC: no space left on device", "/some/dir/spec.sh"));
    expect(e).toBeInstanceOf(AwaitlessError);
    expect(e!.message).toContain("no space left in /some/dir (");
    expect(noSpaceFromErrno(errno("EACCES", "EACCES: permission denied", "/x"))).toBeNull();
  });

  test("an SQLite I/O error with room to spare is not a full disk", () => {
    expect(freeSpace(tmpdir())!.free).toBeGreaterThan(64 * 1024);
    const e = storeError(`${tmpdir()}/awaitless.db`, errno("SQLITE_IOERR_SHMSIZE", "disk I/O error"));
    expect(e.code).toBe("internal");
  });
});
