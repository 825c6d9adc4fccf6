import { describe, expect, test } from "bun:test";
import { DIGEST_LINE_MAX_CHARS, failureDigest, isErrorLine } from "../../src/core/results/digest.ts";

describe("isErrorLine", () => {
  const matching = [
    "src/main.c:3:5: error: expected ';' before '}' token",
    "Error: Cannot find module 'left-pad'",
    "error[E0308]: mismatched types",
    "ERROR: could not open file",
    "2024-01-01 12:00:00 [ERROR] connection refused",
    "FAILED tests/test_math.py::test_add - assert 1 == 2",
    "FAIL src/app.test.ts",
    "--- FAIL: TestParse (0.00s)",
    "TypeError: undefined is not a function",
    'Exception in thread "main" java.lang.NullPointerException',
    "java.lang.IllegalStateException: boom",
    "panic: runtime error: index out of range [3] with length 3",
    "thread 'main' panicked at src/main.rs:2:5:",
    "Traceback (most recent call last):",
    "fatal: not a git repository (or any of the parent directories): .git",
    "npm ERR! code ELIFECYCLE",
    "npm error code E404",
    "E   assert 1 == 2",
    "E       AssertionError: expected 3",
    "assertion failed: x > 0",
    "assertion `left == right` failed",
    "main.o: undefined reference to `foo'",
    "Segmentation fault (core dumped)",
    "./run.sh: line 3: 4242 Killed                  ./train",
    "sh: 1: frobnicate: not found",
    "bash: frobnicate: command not found",
    "cat: missing.txt: No such file or directory",
    "make: *** [Makefile:4: all] Error 2",
    "Tests: 2 failed, 10 passed",
    "1 error generated.",
    "3 failing",
    "Build failed in 2.3s",
    "unhandled exception during shutdown",
    "ld: cannot open output file: Permission denied",
  ];
  for (const line of matching) test(`matches: ${line}`, () => expect(isErrorLine(line)).toBe(true));

  const notMatching = [
    "Compiled with 0 errors and 0 warnings",
    "error-free build",
    "Tests: 12 passed, 0 failed",
    "Tests failed: 0",
    "cc -Werror -O2 -c main.c",
    "warning: unused variable 'x'",
    "errors: none",
    "All 42 tests passed",
    "non-fatal: retrying download",
    "building error_handler.o",
    "Downloading 10%",
    "",
  ];
  for (const line of notMatching)
    test(`does not match: ${JSON.stringify(line)}`, () => expect(isErrorLine(line)).toBe(false));
});

describe("failureDigest", () => {
  test("is empty for empty input", () => {
    expect(failureDigest("", "")).toEqual([]);
    expect(failureDigest("\n\n", "  \n")).toEqual([]);
  });

  test("takes error lines from stderr first, then stdout, then the last stderr line", () => {
    const stdout = "collecting\nFAILED test_a.py::test_x\nok\n";
    const stderr = "compiling\nerror: bad thing\nexiting with status 1\n";
    expect(failureDigest(stdout, stderr)).toEqual([
      "error: bad thing",
      "FAILED test_a.py::test_x",
      "exiting with status 1",
    ]);
  });

  test("does not repeat the last stderr line when it already matched", () => {
    expect(failureDigest("", "one\nError: last words\n")).toEqual(["Error: last words"]);
  });

  test("deduplicates repeated error lines", () => {
    expect(failureDigest("ERROR x\nERROR x\nERROR y\n", "")).toEqual(["ERROR x", "ERROR y"]);
  });

  test("keeps at most maxLines, reserving the last line for stderr's last words", () => {
    const stdout = Array.from({ length: 20 }, (_, i) => `FAIL case ${i}`).join("\n");
    const digest = failureDigest(stdout, "summary: 20 cases broke\n", 4);
    expect(digest).toEqual(["FAIL case 0", "FAIL case 1", "FAIL case 2", "summary: 20 cases broke"]);
    expect(failureDigest(stdout, "", 3)).toEqual(["FAIL case 0", "FAIL case 1", "FAIL case 2"]);
    expect(failureDigest(stdout, "x", 0)).toEqual([]);
  });

  test("cleans escapes and progress frames and trims lines", () => {
    const stderr = "\x1b[31m  error: red text\x1b[0m  \r\nloading 10%\rloading 100%\n";
    expect(failureDigest("", stderr)).toEqual(["error: red text", "loading 100%"]);
  });

  test("caps long lines", () => {
    const [line] = failureDigest(`ERROR ${"x".repeat(1000)}`, "");
    expect(line?.length).toBe(DIGEST_LINE_MAX_CHARS);
    expect(line?.endsWith("…")).toBe(true);
  });

  test("gives only the last stderr line when nothing matches", () => {
    expect(failureDigest("all good\n", "starting\nstopped early\n")).toEqual(["stopped early"]);
  });

  test("1 MB of near-miss text finishes and finds nothing", () => {
    const line = "assert ".repeat(150_000);
    const many = "compiling 0 errors, error-free, -Werror\r100%\n".repeat(20_000);
    expect(failureDigest(`${line}\n${many}`, "")).toEqual([]);
  });
});
