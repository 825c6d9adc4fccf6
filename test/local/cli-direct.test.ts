// `status ID [--json]` skips the command table (src/cli/direct.ts): its words are recognised exactly, and what it
// prints, on both streams, and its exit code are what the table's path gives for the same words.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCli } from "../../src/cli/cli.ts";
import { directStatus, runDirectStatus } from "../../src/cli/direct.ts";
import { createContext } from "../../src/context.ts";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

type Said = { code: number; stdout: string; stderr: string };

function io(): { io: Parameters<typeof runCli>[1]; said: () => Omit<Said, "code"> } {
  let stdout = "";
  let stderr = "";
  return {
    io: {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      env: sb.env,
    },
    // the human status says how long ago the job was created ("(0.8s ago)"): two runs a moment apart may differ
    said: () => ({ stdout: stdout.replace(/\([^()]* ago\)/g, "(… ago)"), stderr }),
  };
}

async function byTable(argv: string[], env = sb.env): Promise<Said> {
  const o = io();
  const code = await runCli(argv, o.io, async () => createContext(env));
  return { code, ...o.said() };
}

async function direct(argv: string[], env = sb.env): Promise<Said> {
  const given = directStatus(argv);
  if (!given) throw new Error(`${argv.join(" ")} does not take the direct path`);
  const o = io();
  const code = await runDirectStatus(given, o.io, async () => createContext(env));
  return { code, ...o.said() };
}

let ok = "";
let failed = "";
let array = "";
beforeAll(() => {
  ok = sb.submit(["sh", "-c", "echo fine"]);
  failed = sb.submit(["sh", "-c", "echo bad >&2; exit 3"]);
  const r = sb.run(["submit", "--array", "0-2", "--json", "--", "true"]);
  expect(r.code).toBe(0);
  array = (r.json as { job_id: string }).job_id;
  expect(sb.run(["wait", ok]).code).toBe(0);
  expect(sb.run(["wait", failed]).code).toBe(3);
  expect(sb.run(["wait", array]).code).toBe(0);
});

describe("which words take the direct path", () => {
  test("status, one job ID and at most --json, in either order", () => {
    expect(directStatus(["status", "job_1"])).toEqual({ id: "job_1", json: false });
    expect(directStatus(["status", "job_1", "--json"])).toEqual({ id: "job_1", json: true });
    expect(directStatus(["status", "--json", "job_1"])).toEqual({ id: "job_1", json: true });
    expect(directStatus(["status", "ARR.3"])).toEqual({ id: "ARR.3", json: false });
  });

  test("anything else goes to the command table", () => {
    for (const argv of [
      ["status"],
      ["status", "--json"],
      ["status", "--last"],
      ["status", "--last", "--json"],
      ["status", "job_1", "--help"],
      ["status", "job_1", "-h"],
      ["status", "job_1", "job_2"],
      ["status", "job_1", "--json", "--json"],
      ["status", "job_1", "--jsn"],
      ["status", "job_1", "--config", "x.toml"],
      ["status", "job_1", "--"],
      ["status", "-x"],
      ["status", ""],
      ["stauts", "job_1"],
      ["wait", "job_1"],
      ["list"],
    ])
      expect(directStatus(argv)).toBeUndefined();
  });
});

describe("the direct path says what the table says", () => {
  const cases: Array<[string, () => string[]]> = [
    ["a succeeded job", () => [ok]],
    ["a succeeded job, --json", () => [ok, "--json"]],
    ["--json first", () => ["--json", ok]],
    ["a failed job", () => [failed]],
    ["a failed job, --json", () => [failed, "--json"]],
    ["a unique prefix", () => [ok.slice(0, -4), "--json"]],
    ["an array", () => [array]],
    ["an array, --json", () => [array, "--json"]],
    ["a task address", () => [`${array}.1`, "--json"]],
    ["an unknown ID", () => ["job_nope"]],
    ["an unknown ID, --json", () => ["job_nope", "--json"]],
    ["a number", () => ["007", "--json"]],
    ["an ambiguous prefix", () => ["job_", "--json"]],
    ["a task out of range", () => [`${array}.9`]],
  ];
  for (const [what, words] of cases)
    test(what, async () => {
      const argv = ["status", ...words()];
      const mine = await direct(argv);
      const table = await byTable(argv);
      expect(mine).toEqual(table);
      expect(mine.stdout + mine.stderr).not.toBe("");
    });

  test("a config with a mistyped key", async () => {
    const bad = new Sandbox();
    try {
      bad.writeConfig("[defaults]\nlog_tail_lnes = 3\n");
      for (const argv of [
        ["status", ok],
        ["status", ok, "--json"],
      ]) {
        const mine = await direct(argv, bad.env);
        expect(mine).toEqual(await byTable(argv, bad.env));
        expect(mine.code).not.toBe(0);
        expect(mine.stderr).toContain("log_tail_lnes");
      }
    } finally {
      bad.cleanup();
    }
  });
});
