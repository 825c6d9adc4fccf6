// The one log read path without a job: the pattern language (checked against real grep -E), the in-process scanner
// (line numbers, matches_total, cursors, budget cuts, redaction at cuts, a capped log's dropped middle) and the page
// built from a scan. The remote program under real shells: test/wrapper/log-scan-remote.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scanLocalLog } from "../../src/backends/local/local-logs.ts";
import { gapMarker, type LogQuery, shapeLines, toPage } from "../../src/core/logs/log-query.ts";
import { compileLogPattern } from "../../src/core/logs/pattern.ts";
import type { AwaitlessError } from "../../src/core/model/errors.ts";
import { Redactor } from "../../src/core/util/redact.ts";
import { jobDirsIn, numbered, q } from "../helpers/log-fixtures.ts";

const tmp = mkdtempSync(join(tmpdir(), "awl-log-scan-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const jobDir = jobDirsIn(tmp);

const pageOf = (dir: string, query: LogQuery, secrets: string[] = []) => {
  const scan = scanLocalLog(dir, "stdout", query);
  return toPage(scan, query, shapeLines(scan, query, new Redactor(secrets)), query.budget);
};

describe("the pattern language: POSIX ERE, byte-wise", () => {
  const sample = [
    "FAIL: test_a",
    "Error: disk full",
    "ok 12 passed",
    "a.b and a+b",
    "tab\there",
    "x{2} literal",
    "café au lait",
    "[brackets] (parens) $dollar ^caret",
    "back\\slash",
    "",
    "aaa",
  ].join("\n");
  const patterns = [
    "FAIL|Error",
    "^ok [0-9]+ passed$",
    "a\\.b",
    "a\\+b",
    "[[:digit:]]{2}",
    "^$",
    "^a*$",
    "(ab)+$",
    "(ok|FAIL) [0-9]",
    "[^a-z ]",
    "\\[brackets\\] \\(parens\\)",
    "\\$dollar \\^caret",
    "x\\{2\\}",
    "caf",
    "café",
    "back\\\\slash",
    "[]x]",
    "t.b",
    "a{2,3}",
    "[[:space:]]here",
  ];
  const grepCount = (grep: string[], pattern: string): number => {
    const p = Bun.spawnSync([...grep, "-a", "-c", "-E", "-e", pattern], {
      stdin: Buffer.from(`${sample}\n`),
      env: { ...process.env, LC_ALL: "C" },
    });
    return Number(p.stdout.toString().trim());
  };
  const jsCount = (pattern: string): number => {
    const { regex } = compileLogPattern(pattern);
    const text = Buffer.from(sample).toString("latin1");
    return text.split("\n").filter((line) => {
      regex.lastIndex = 0;
      return regex.test(line);
    }).length;
  };
  const greps: [string, string[]][] = [["GNU grep", ["grep"]]];
  if (Bun.which("busybox")) greps.push(["busybox grep", ["busybox", "grep"]]);
  for (const [name, argv] of greps) {
    test(`each pattern selects the same lines in-process as ${name} -E`, () => {
      for (const p of patterns) expect({ p, n: jsCount(p) }).toEqual({ p, n: grepCount(argv, p) });
    });
  }

  test("'FAIL|Error' is an alternation, as it was before", () => {
    expect(jsCount("FAIL|Error")).toBe(2);
  });

  test("a plain pattern takes the literal fast path", () => {
    expect(compileLogPattern("line 000001").literal).toBe("line 000001");
    expect(compileLogPattern("a\\.b").literal).toBe("a.b");
    expect(compileLogPattern("a.b").literal).toBeNull();
  });

  test("a regex names the bytes every matching line holds, to skip the others before running it", () => {
    expect(compileLogPattern("line 0+123 +CC").required).toBe("line 0");
    expect(compileLogPattern("^ok [0-9]+ passed$").required).toBe(" passed");
    expect(compileLogPattern("abc*d").required).toBe("ab");
    expect(compileLogPattern("x(ab)?yz{0,2}wv").required).toBe("wv");
    expect(compileLogPattern("FAIL|Error").required).toBeNull();
    expect(compileLogPattern("(FAIL|Error): x").required).toBe(": x");
  });

  test("syntax that is not POSIX ERE, or means something else in awk or grep, is refused with a hint", () => {
    const refused = (p: string): AwaitlessError => {
      try {
        compileLogPattern(p);
      } catch (e) {
        return e as AwaitlessError;
      }
      throw new Error(`${p} was accepted`);
    };
    expect(refused("\\d+").hint).toContain("[0-9]");
    expect(refused("\\bword").message).toContain("not POSIX extended syntax");
    expect(refused("").code).toBe("invalid_argument");
    expect(refused("a\nb").message).toContain("line break");
    expect(refused("(unclosed").message).toContain("not closed");
    expect(refused("*a").message).toContain("must follow");
    expect(refused("a**").message).toContain("must follow");
    expect(refused("a*?").message).toContain("must follow");
    expect(refused("(?:x)").message).toContain("must follow");
    expect(refused("a|").message).toContain("empty");
    expect(refused("()").message).toContain("empty group");
    expect(refused("[\\]]").message).toContain("backslash inside");
    expect(refused("x{,2}").message).toContain("repetition");
    expect(refused("[z-a]").message).toContain("backwards");
    expect(refused("[[:word:]]").message).toContain("not a character class");
  });
});

describe("the in-process scan", () => {
  const big = numbered(20_000);

  test("grep scans the whole log: a line near the start of a long log is found with its number", () => {
    const dir = jobDir({ stdout: big });
    const page = pageOf(dir, q({ grep: "line 000001$", budget: 16_384 }));
    expect(page.text).toBe("1:line 000001\n");
    expect(page.matches_total).toBe(1);
    expect(page.lines).toBe(1);
    expect(page.left_out).toBe("");
  });

  test("an absent pattern: no lines and matches_total 0 over the whole log", () => {
    const dir = jobDir({ stdout: big });
    const page = pageOf(dir, q({ grep: "nowhere", budget: 16_384 }));
    expect(page).toMatchObject({ text: "", lines: 0, matches_total: 0 });
  });

  test("the last N matches, matches_total, and next_to_line to read the earlier ones", () => {
    const dir = jobDir({ stdout: big });
    const page = pageOf(dir, q({ grep: "0$", limit: 3 }));
    expect(page.text).toBe("19980:line 019980\n19990:line 019990\n20000:line 020000\n");
    expect(page.matches_total).toBe(2000);
    expect(page.next_to_line).toBe(19979);
    const before = pageOf(dir, q({ grep: "0$", limit: 2, to: 19979 }));
    expect(before.text).toBe("19960:line 019960\n19970:line 019970\n");
    expect(before.matches_total).toBe(1997);
  });

  test("forward grep from a line: the first matches, and next_from_line continues", () => {
    const dir = jobDir({ stdout: big });
    const page = pageOf(dir, q({ grep: "5$", from: 100, limit: 2, forward: true }));
    expect(page.text).toBe("105:line 000105\n115:line 000115\n");
    expect(page.next_from_line).toBe(125);
    expect(page.matches_total).toBe(1990);
  });

  test("head and line ranges page forward with next_from_line; lines_total once the end is reached", () => {
    const dir = jobDir({ stdout: numbered(10) });
    const head = pageOf(dir, q({ limit: 3, forward: true }));
    expect(head.text).toBe("line 000001\nline 000002\nline 000003\n");
    expect(head).toMatchObject({ first_line: 1, last_line: 3, next_from_line: 4 });
    const range = pageOf(dir, q({ from: 8, to: 20, forward: true }));
    expect(range).toMatchObject({ first_line: 8, last_line: 10, lines_total: 10 });
    expect(range.next_from_line).toBeUndefined();
    const past = pageOf(dir, q({ from: 50, forward: true }));
    expect(past.lines).toBe(0);
  });

  test("the default read is the end that fits the budget, with next_to_line before it", () => {
    const dir = jobDir({ stdout: numbered(1000) });
    const page = pageOf(dir, q({ budget: 120 }));
    expect(page.text.length).toBeLessThanOrEqual(120);
    expect(page.last_line).toBe(1000);
    expect(page.lines_total).toBe(1000);
    expect(page.next_to_line).toBe((page.first_line as number) - 1);
    expect(page.text.endsWith("line 001000\n")).toBe(true);
  });

  test("the budget cuts pages: a forward page stops at the budget and says where to go on", () => {
    const dir = jobDir({ stdout: numbered(100) });
    const page = pageOf(dir, q({ forward: true, budget: 50 }));
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(50);
    expect(page.lines).toBe(4);
    expect(page.next_from_line).toBe(5);
  });

  test("a line longer than the budget is cut and marked, never dropped silently", () => {
    const dir = jobDir({ stdout: `short\n${"x".repeat(5000)}ERROR\nend\n` });
    const page = pageOf(dir, q({ grep: "ERROR", budget: 100 }));
    expect(page.lines).toBe(1);
    expect(page.cut_lines).toBe(1);
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(100);
    expect(page.text.startsWith("2:xxx")).toBe(true);
    expect(page.text).toContain("…");
  });

  test("redaction at a cut: a secret straddling the budget is redacted whole, not shown in part", () => {
    const secret = "s3cr3t-value-0123456789";
    const line = `${"y".repeat(88)}${secret} tail`;
    const dir = jobDir({ stdout: `${line}\n` });
    const page = pageOf(dir, q({ grep: "tail", budget: 100 }), [secret]);
    expect(page.text).not.toContain("s3cr3t");
    expect(page.text).toContain("[RED");
    const plain = pageOf(dir, q({ forward: true, budget: 100 }), [secret]);
    expect(plain.text).not.toContain("s3cr3t");
    const key = "AKIAABCDEFGHIJKLMNOP";
    const shaped = jobDir({ stdout: `${"z".repeat(92)}${key} done\n` });
    expect(pageOf(shaped, q({ grep: "done", budget: 100 })).text).not.toContain("AKIAAB");
  });

  test("a matching line inside a private key block is redacted whole; its markers are kept", () => {
    const body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
    const dir = jobDir({
      stdout: `before\n-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\nafter MIIE\n`,
    });
    const page = pageOf(dir, q({ grep: "MIIE" }));
    expect(page.text).toBe("3:[REDACTED]\n5:after MIIE\n");
    const plain = pageOf(dir, q({ from: 2, to: 4, forward: true }));
    expect(plain.text).toBe("-----BEGIN PRIVATE KEY-----\n[REDACTED]\n-----END PRIVATE KEY-----\n");
  });

  test("a capped log with a dropped middle: honest numbers and a marker line, said so on the page", () => {
    const head = numbered(5, (i) => `head ${i}`);
    const prev = "tail 1\ntail 2\n";
    const dir = jobDir({
      "stdout.head": head,
      "stdout.prev": prev,
      stdout: "tail 3\nERROR at the end\n",
      "stdout.dropped": "1000\n",
    });
    const omitted = 1000 - Buffer.byteLength(head);
    const page = pageOf(dir, q({ forward: true }));
    expect(page.text).toBe(`${head}\n${gapMarker(omitted)}\n${prev}tail 3\nERROR at the end\n`);
    expect(page.dropped_middle).toEqual({ after_line: 6, bytes: omitted });
    expect(page.left_out).toContain(`${omitted} bytes the log cap dropped after line 6`);
    const grep = pageOf(dir, q({ grep: "ERROR|head 1$" }));
    expect(grep.text).toBe("1:head 1\n11:ERROR at the end\n");
    expect(grep.matches_total).toBe(2);
  });

  test("a capped log whose head meets the rolling tail is whole: no gap, exact numbers", () => {
    const dir = jobDir({
      "stdout.head": "a1\na2\na3\n",
      "stdout.prev": "a3\nb1\n",
      stdout: "b2\n",
      "stdout.dropped": "6",
    });
    const page = pageOf(dir, q({ forward: true }));
    expect(page.text).toBe("a1\na2\na3\nb1\nb2\n");
    expect(page.dropped_middle).toBeUndefined();
  });

  test("escapes and progress frames are cleaned in returned lines; the pattern sees the line as written", () => {
    const dir = jobDir({ stdout: "\x1b[31mERROR\x1b[0m red\n10%\r50%\r100% done\n" });
    expect(pageOf(dir, q({ grep: "ERROR" })).text).toBe("1:ERROR red\n");
    expect(pageOf(dir, q({ grep: "50%" })).text).toBe("2:100% done\n");
  });
});
