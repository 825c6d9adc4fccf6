// Writes into a job directory follow no symlink: a planted link (to a file outside, or dangling) is replaced or
// refused, and what it points at is untouched.
import { afterAll, expect, test } from "bun:test";
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAppend, replaceFile, writeFresh } from "../../src/wrapper/safe-files.ts";

const root = mkdtempSync(join(tmpdir(), "awl-safe-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("replaceFile over a symlink to a file outside replaces the link, not the file", () => {
  const precious = join(root, "precious-1");
  writeFileSync(precious, "keep me\n");
  symlinkSync(precious, join(root, "spec.sh"));
  replaceFile(join(root, "spec.sh"), "set -- true\n", 0o600);
  expect(readFileSync(precious, "utf8")).toBe("keep me\n");
  expect(lstatSync(join(root, "spec.sh")).isSymbolicLink()).toBe(false);
  expect(readFileSync(join(root, "spec.sh"), "utf8")).toBe("set -- true\n");
  expect((lstatSync(join(root, "spec.sh")).mode & 0o777).toString(8)).toBe("600");
});

test("writeFresh refuses a dangling symlink and creates nothing at its target", () => {
  const target = join(root, "would-be-created");
  symlinkSync(target, join(root, "cancel.tmp"));
  expect(() => writeFresh(join(root, "cancel.tmp"), "5\n", 0o600)).toThrow(/EEXIST/);
  expect(existsSync(target)).toBe(false);
});

test("openAppend refuses a symlinked wrapper.log", () => {
  const precious = join(root, "precious-2");
  writeFileSync(precious, "keep me\n");
  symlinkSync(precious, join(root, "wrapper.log"));
  expect(() => openAppend(join(root, "wrapper.log"), 0o600)).toThrow(/ELOOP/);
  expect(readFileSync(precious, "utf8")).toBe("keep me\n");
});
