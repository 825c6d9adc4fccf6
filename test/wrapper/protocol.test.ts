// Pure parts of the wrapper protocol: spec rendering and its validation, record parsers, log plan, script hash.

import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AwaitlessError } from "../../src/core/model/errors.ts";
import {
  EXIT_RESERVATION,
  FILES,
  parseExitRecord,
  parseHeartbeat,
  parseKeyValue,
  parseStarted,
  planLog,
  renderSpec,
  type SpecInput,
  shellQuote,
} from "../../src/wrapper/protocol.ts";
import { WRAPPER_SHA256, WRAPPER_TEXT } from "../../src/wrapper/scripts.ts";
import { sha256Hex } from "../../src/wrapper/sha256.ts";
import { assemble } from "../../src/wrapper/shell-text.ts";

const BASE: SpecInput = { jobId: "job_X", cwd: "/tmp/w", argv: ["echo", "hi"], env: {} };

function renderError(input: Partial<SpecInput>): AwaitlessError {
  try {
    renderSpec({ ...BASE, ...input });
  } catch (error) {
    expect(error).toBeInstanceOf(AwaitlessError);
    return error as AwaitlessError;
  }
  throw new Error("renderSpec accepted invalid input");
}

describe("renderSpec", () => {
  test("renders settings, quoted argv and env exports, with defaults for omitted durations", () => {
    const spec = renderSpec({ ...BASE, argv: ["a b", "it's"], env: { FOO: "x'y" }, timeoutSeconds: 30 });
    expect(spec).toContain(
      "AWL_JOB_ID='job_X'\nAWL_CWD='/tmp/w'\nAWL_TIMEOUT=30\nAWL_GRACE=10\nAWL_TICK=1\n",
    );
    expect(spec).toContain("AWL_HEARTBEAT=30\nAWL_CHECK_MAX=15\nAWL_LOG_CAP=0\n");
    expect(spec).toContain("set -- 'a b' 'it'\\''s'\n");
    expect(spec).toContain("awl_env() {\n  command export 'FOO=x'\\''y'\n  :\n}\n");
  });

  test("is pure: the same input renders the same text", () => {
    expect(renderSpec(BASE)).toBe(renderSpec({ ...BASE }));
  });

  test("rejects env names the shell cannot export, naming the variable", () => {
    for (const name of ["1ABC", "A-B", "A B", "", "A=B", "É"]) {
      const error = renderError({ env: { [name]: "v" } });
      expect(error.code).toBe("invalid_argument");
      expect(error.message).toContain(JSON.stringify(name));
      expect(error.hint).toContain("letters, digits and _");
    }
  });

  test("rejects NUL bytes anywhere", () => {
    expect(renderError({ argv: ["echo", "a\0b"] }).message).toContain("argv[1]");
    expect(renderError({ env: { A: "\0" } }).message).toContain("env.A");
    expect(renderError({ cwd: "/a\0" }).message).toContain("cwd");
    expect(renderError({ jobId: "j\0" }).message).toContain("jobId");
  });

  test("rejects an empty command, bad durations and a tiny log cap", () => {
    expect(renderError({ argv: [] }).message).toContain("argv");
    expect(renderError({ argv: [""] }).message).toContain("argv");
    expect(renderError({ cwd: "" }).message).toContain("cwd");
    expect(renderError({ timeoutSeconds: -1 }).message).toContain("timeoutSeconds");
    expect(renderError({ graceSeconds: 1.5 }).message).toContain("graceSeconds");
    expect(renderError({ tickSeconds: 0 }).message).toContain("tickSeconds");
    expect(renderError({ logCapBytes: 10 }).hint).toContain("1024");
    expect(renderError({ argv: ["echo", "\ud800"] }).message).toContain("Unicode");
  });
});

describe("shellQuote", () => {
  test("wraps in single quotes and escapes single quotes only", () => {
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
    expect(shellQuote('$x `y` "z" \\')).toBe("'$x `y` \"z\" \\'");
  });
});

describe("record parsers", () => {
  test("parseKeyValue keeps everything after the first =", () => {
    expect(parseKeyValue("a=1\nb=x=y\nnoequals\n=bad\nc=\n")).toEqual({ a: "1", b: "x=y", c: "" });
  });

  test("parseStarted reads pids and leaves empty fields out", () => {
    const text =
      "protocol=1\nwrapper_pid=10\npid=11\npgid=11\nboot_id=abc\nproc_start=123\nstarted_at=1700000000\n";
    expect(parseStarted(text)).toEqual({
      protocol: 1,
      wrapperPid: 10,
      pid: 11,
      pgid: 11,
      bootId: "abc",
      procStart: "123",
      startedAtEpochSeconds: 1700000000,
    });
    expect(parseStarted("wrapper_pid=10\npid=11\npgid=\nboot_id=\nproc_start=\nstarted_at=5\n")).toEqual({
      protocol: 1,
      wrapperPid: 10,
      pid: 11,
      startedAtEpochSeconds: 5,
    });
  });

  test("a record cut short or missing required keys is null", () => {
    expect(parseStarted("wrapper_pid=10\npid=11\nstarted_at=5")).toBeNull();
    expect(parseStarted("wrapper_pid=10\nstarted_at=5\n")).toBeNull();
    expect(parseHeartbeat("now=1\nout=2\nerr=3\nprogress=4\n")).toBeNull();
    expect(parseExitRecord("exit_code=0\nreason=exited\n")).toBeNull();
    expect(parseExitRecord("exit_code=0\nreason=unknown\nfinished_at=1\n")).toBeNull();
  });

  test("parseHeartbeat", () => {
    expect(parseHeartbeat("now=9\nout=1\nerr=2\nprogress=3\nlast_change=8\n")).toEqual({
      nowEpochSeconds: 9,
      stdoutBytes: 1,
      stderrBytes: 2,
      progressBytes: 3,
      lastChangeEpochSeconds: 8,
    });
  });

  test("parseExitRecord: signal death, and a cancel before start without an exit code", () => {
    const killed =
      "exit_code=137\nsignal=KILL\nreason=timed_out\nfinished_at=7\ndescendants_alive=1\n" +
      "stdout_dropped=5\nstderr_dropped=0\nstdout_bytes=10\nstderr_bytes=0\n";
    expect(parseExitRecord(killed)).toEqual({
      exitCode: 137,
      signal: "KILL",
      reason: "timed_out",
      finishedAtEpochSeconds: 7,
      descendantsAlive: true,
      stdoutDroppedBytes: 5,
      stderrDroppedBytes: 0,
      stdoutBytes: 10,
      stderrBytes: 0,
    });
    const never = "exit_code=\nsignal=\nreason=cancelled\nfinished_at=7\ndescendants_alive=0\n";
    expect(parseExitRecord(never)).toEqual({
      reason: "cancelled",
      finishedAtEpochSeconds: 7,
      descendantsAlive: false,
      stdoutDroppedBytes: 0,
      stderrDroppedBytes: 0,
    });
  });
});

describe("the exit record's reservation", () => {
  test("the reservation is no record; a record written over it, padded with spaces, parses whole", () => {
    expect(EXIT_RESERVATION.text).toHaveLength(512);
    expect(parseExitRecord(EXIT_RESERVATION.text)).toBeNull();
    const record = "exit_code=7\nsignal=\nreason=exited\nfinished_at=7\nno_space=1\n";
    const padded = `${record}${" ".repeat(512 - record.length - 1)}\n`;
    expect(padded).toHaveLength(512);
    expect(parseExitRecord(padded)).toMatchObject({ exitCode: 7, reason: "exited", noSpace: true });
    // A record cut while it was written over the reservation lacks its keys: still no record.
    expect(parseExitRecord(`exit_code=7\nsig${EXIT_RESERVATION.text.slice(15)}`)).toBeNull();
  });
});

describe("planLog", () => {
  test("nothing dropped: the head is not shown", () => {
    expect(planLog({ headFileBytes: 0, prevBytes: 10, liveBytes: 5, droppedBytes: 0 })).toMatchObject({
      headBytes: 0,
      omittedBytes: 0,
      totalBytes: 15,
    });
  });

  test("fewer bytes dropped than the head holds: only the missing part of the head is shown", () => {
    expect(planLog({ headFileBytes: 100, prevBytes: 50, liveBytes: 0, droppedBytes: 30 })).toMatchObject({
      headBytes: 30,
      omittedBytes: 0,
      totalBytes: 80,
    });
  });

  test("many bytes dropped: head, then the omitted gap", () => {
    expect(planLog({ headFileBytes: 100, prevBytes: 50, liveBytes: 7, droppedBytes: 1000 })).toMatchObject({
      headBytes: 100,
      omittedBytes: 900,
      totalBytes: 1057,
    });
  });
});

describe("embedded wrapper", () => {
  test("WRAPPER_TEXT is wrapper.sh with each fragment it names spliced in (each of job/ once), and WRAPPER_SHA256 its SHA-256", () => {
    const read = (name: string) => readFileSync(join(import.meta.dir, "../../src/wrapper", name), "utf8");
    const included: string[] = [];
    const splice = (text: string): string =>
      text
        .split(/(?<=\n)/)
        .map((line) => {
          const m = /^# awaitless:include (\S+)\n$/.exec(line);
          if (!m) return line;
          included.push(m[1]!);
          return splice(read(m[1]!).replace("# shellcheck shell=sh\n", ""));
        })
        .join("");
    // as it runs: the header (the leading comment block) kept, every later comment line dropped
    const spliced = splice(read("wrapper.sh")).split("\n");
    const header = spliced.findIndex((line) => !line.startsWith("#"));
    expect(header).toBeGreaterThan(20);
    expect(WRAPPER_TEXT).toBe(
      [
        ...spliced.slice(0, header),
        ...spliced.slice(header).filter((line) => !line.trimStart().startsWith("#")),
      ].join("\n"),
    );
    expect(WRAPPER_TEXT.length).toBeLessThan(spliced.join("\n").length * 0.7);
    expect(WRAPPER_TEXT).not.toContain("awaitless:include");
    const parts = readdirSync(join(import.meta.dir, "../../src/wrapper/job")).map((f) => `job/${f}`);
    expect(included.filter((n) => n.startsWith("job/")).sort()).toEqual(parts.sort());
    expect(included).toContain("prelude.sh");
    expect(included).toContain("tracking.sh");
    expect(WRAPPER_SHA256).toBe(new Bun.CryptoHasher("sha256").update(WRAPPER_TEXT).digest("hex"));
  });

  test("the comment lines dropped from the running wrapper held no code: bash reads the same functions and main part", () => {
    const bash = Bun.which("bash");
    if (!bash) throw new Error("bash is needed to compare the wrapper's functions (apt-get install bash)");
    const read = (name: string) => readFileSync(join(import.meta.dir, "../../src/wrapper", name), "utf8");
    const full = assemble(read("wrapper.sh"));
    // every function as bash prints it back (comments gone, layout normalized), then the main part's code lines
    const code = (text: string) => {
      const main = text.indexOf("\nawl_launch_clock=");
      expect(main).toBeGreaterThan(0);
      const r = spawnSync(bash, ["-c", `eval "$1"; declare -f`, "bash", text.slice(0, main)], {
        encoding: "utf8",
      });
      expect(r.stderr).toBe("");
      const mainLines = text
        .slice(main)
        .split("\n")
        .filter((line) => !line.trimStart().startsWith("#"));
      return { functions: r.stdout, main: mainLines };
    };
    const running = code(WRAPPER_TEXT);
    expect(running.functions.length).toBeGreaterThan(50_000);
    expect(running).toEqual(code(full));
  });

  test("sha256Hex matches a reference across block boundaries", () => {
    for (const text of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "ü✓🚀".repeat(99)]) {
      expect(sha256Hex(text)).toBe(new Bun.CryptoHasher("sha256").update(text).digest("hex"));
    }
  });

  test("the script header documents every protocol file", () => {
    const header = WRAPPER_TEXT.slice(0, WRAPPER_TEXT.indexOf("\numask"));
    for (const name of Object.values(FILES)) expect(header).toContain(name);
  });
});
