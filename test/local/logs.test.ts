// `awaitless logs` through the compiled binary on a local job with a 1 MiB+ log: --grep scans the whole log (line
// numbers, absent said plainly), --head and --lines page it, stdout carries only lines and stderr says how to read on.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";

/** 16,000 lines of 70 bytes (1.1 MB), one ERROR in the middle. */
const PRINT =
  'awk \'BEGIN { for (i = 1; i <= 16000; i++) { printf "line %06d %s\\n", i, (i == 8000 ? "ERROR in the middle" : ' +
  '"build output build output build output build output ok") } }\'';
const LINE = (i: number) =>
  `line ${String(i).padStart(6, "0")} build output build output build output build output ok`;

let sb: Sandbox;
let id = "";
beforeAll(() => {
  sb = new Sandbox();
  id = sb.submit(["sh", "-c", PRINT]);
  expect(sb.run(["wait", id]).code).toBe(0);
});
afterAll(() => sb.cleanup());
const logs = (...args: string[]) => sb.run(["logs", id, "--stream", "stdout", ...args]);

describe("logs of a 1 MiB+ local log", () => {
  test("--grep finds a line near the start, with its number; JSON has matches_total", () => {
    const r = logs("--grep", "line 000001 ");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`1:${LINE(1)}\n`);
    expect(r.stderr).toBe("");
    const json = logs("--grep", "ERROR", "--json").json;
    expect(json.stdout_bytes).toBeGreaterThan(1 << 20);
    expect(json.stdout).toBe("8000:line 008000 ERROR in the middle\n");
    expect(json.stdout_page).toMatchObject({ matches_total: 1, lines: 1, left_out: "" });
  });

  test("'FAIL|Error' style alternation keeps working", () => {
    expect(logs("--grep", "ERROR|line 000002 ").stdout).toBe(
      `2:${LINE(2)}\n8000:line 008000 ERROR in the middle\n`,
    );
  });

  test("an absent pattern is absent from the whole log", () => {
    const r = logs("--grep", "no such line");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('(no stdout line matches "no such line" in the whole log)\n');
  });

  test("--grep with --tail: the last matches, and stderr gives the command for the earlier ones", () => {
    const r = logs("--grep", "5 build", "--tail", "2");
    expect(r.stdout).toBe(`15985:${LINE(15985)}\n15995:${LINE(15995)}\n`);
    expect(r.stderr).toContain("1598 more matching line(s)");
    expect(r.stderr).toContain(
      `awaitless logs ${id} --stream stdout --grep '5 build' --tail 2 --lines :15984`,
    );
    const earlier = logs("--grep", "5 build", "--tail", "2", "--lines", ":15984");
    expect(earlier.stdout).toBe(`15965:${LINE(15965)}\n15975:${LINE(15975)}\n`);
  });

  test("--head N and --lines A:B page the log; --lines A: continues", () => {
    const head = logs("--head", "2");
    expect(head.stdout).toBe(`${LINE(1)}\n${LINE(2)}\n`);
    expect(head.stderr).toContain(`--head 2 --lines 3:`);
    expect(logs("--lines", "7999:8001").stdout).toBe(
      `${LINE(7999)}\nline 008000 ERROR in the middle\n${LINE(8001)}\n`,
    );
    expect(logs("--lines", "15999:").stdout).toBe(`${LINE(15999)}\n${LINE(16000)}\n`);
    expect(logs("--lines", "15999:", "--json").json.stdout_page.lines_total).toBe(16_000);
  });

  test("bad paging is refused with what to do", () => {
    for (const [args, text] of [
      [["--lines", "9:3"], "ends before it starts"],
      [["--lines", "a:b"], "give a line range such as 1200:1300"],
      [["--head", "2", "--tail", "2"], "first and the last lines"],
      [["--grep", "\\d+"], "[0-9]"],
      [["--grep", "x", "--follow"], "does not combine"],
    ] as const) {
      const r = logs(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(text);
    }
  });
});
