// Each command evaluates only the modules it uses: run from source with a module trace (test/helpers/module-trace.ts),
// a local command never reaches the MCP server, the dashboard, SSH, Slurm or the 0.8 watcher, and --version nothing
// but the entry.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT, Sandbox } from "../helpers/cli.ts";

const SRC = join(ROOT, "src");
const sb = new Sandbox();
afterAll(() => sb.cleanup());

/** The src/ modules (relative paths) `awaitless ARGS` evaluates, run from source with the trace preload. */
function modulesOf(args: string[]): { modules: string[]; code: number; stdout: string } {
  const trace = join(sb.root, "modules.trace");
  rmSync(trace, { force: true });
  const r = Bun.spawnSync(
    [
      process.execPath,
      "--preload",
      join(ROOT, "test/helpers/module-trace.ts"),
      join(SRC, "main.ts"),
      ...args,
    ],
    { cwd: sb.work, env: { ...sb.env, AWL_MODULE_TRACE: trace }, stdout: "pipe", stderr: "pipe" },
  );
  let text = "";
  try {
    text = readFileSync(trace, "utf8");
  } catch {
    // nothing traced: the assertion below says so
  }
  const modules = [...new Set(text.split("\n").filter(Boolean))].map((p) => relative(SRC, p)).sort();
  return { modules, code: r.exitCode ?? -1, stdout: r.stdout.toString() };
}

/** What no command about local jobs evaluates. */
const NOT_LOCAL =
  /^(mcp\/|mcp-entry\.ts|ui\/|ssh\/|backends\/(ssh|slurm|awaitless08)\/|cli\/(doctor|demo|completion|ui-command|mcp-config))/;

let done = "";
beforeAll(() => {
  done = sb.submit(["true"]);
  expect(sb.run(["wait", done]).code).toBe(0);
});

describe("each command loads only what it uses", () => {
  test("the trace sees a command's modules (mcp-config loads its own)", () => {
    const r = modulesOf(["mcp-config", "json"]);
    expect(r.code).toBe(0);
    expect(r.modules).toContain("main.ts");
    expect(r.modules).toContain("cli/mcp-config.ts");
  });

  test("a launch loads the wrapper's scripts, and a config with keys the config schema (what a status leaves out)", () => {
    expect(modulesOf(["submit", "--", "true"]).modules).toContain("wrapper/scripts.ts");
    sb.writeConfig("[defaults]\nlog_tail_lines = 20\n");
    try {
      expect(modulesOf(["status", done, "--json"]).modules).toContain("config/config-schema.ts");
    } finally {
      sb.writeConfig("");
    }
  });

  for (const word of ["--version", "-V", "version"])
    test(`${word} evaluates the entry alone (main.ts and the version), nothing of the program`, () => {
      const r = modulesOf([word]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^awaitless \d+\.\d+\.\d+\S*\n$/);
      expect(r.modules).toEqual(["main.ts", "version.ts"]);
    });

  test("any other words start the program (start.ts), the version command's options included", () => {
    const r = modulesOf(["version", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ version: expect.any(String) });
    expect(r.modules).toContain("start.ts");
    expect(r.modules).toContain("cli/cli.ts");
  });

  for (const args of [
    ["status", "JOB", "--json"],
    ["list"],
    ["run", "--json", "--", "true"],
    ["submit", "--", "true"],
    ["wait", "JOB"],
  ]) {
    test(`${args.join(" ")} of a local job reaches no MCP, dashboard, SSH, Slurm or 0.8 module`, () => {
      const r = modulesOf(args.map((a) => (a === "JOB" ? done : a)));
      expect(r.code).toBe(0);
      expect(r.modules).toContain("backends/local/local-backend.ts");
      expect(r.modules.filter((m) => NOT_LOCAL.test(m))).toEqual([]);
    });
  }

  /** What reading local jobs never uses: the 0.8 import (and its offer, with no 0.8 store around), submit and launch,
   * cancel, queue administration, logs (read, follow, search), results, the CLI's array and logs commands, the
   * wrapper's scripts (assembled and hashed for a launch or cancel), and the config schema (a config without keys). */
  const NOT_READING =
    /^(core\/import-08\/(?!find-08\.ts$)|cli\/(import-command|import-offer|array-commands|logs-command)\.ts$|core\/service\/(submit|launch|cancel|completions)\.ts$|core\/queues\/|core\/logs\/(read|follow|pattern)|backends\/local\/artifacts-local\.ts$|wrapper\/(scripts|shell-text)\.ts$|config\/config-schema\.ts$)/;
  for (const args of [["status", "JOB", "--json"], ["list"], ["list", "--json"], ["wait", "JOB"]]) {
    test(`${args.join(" ")} of an ended local job loads no launch, cancel, queue, logs or 0.8 import module`, () => {
      const r = modulesOf(args.map((a) => (a === "JOB" ? done : a)));
      expect(r.code).toBe(0);
      expect(r.modules).toContain("core/service/job-service.ts");
      expect(r.modules.filter((m) => NOT_LOCAL.test(m) || NOT_READING.test(m))).toEqual([]);
    });
  }

  for (const args of [
    ["status", "JOB", "--json"],
    ["status", "--json", "JOB"],
    ["status", "JOB"],
  ])
    test(`${args.join(" ")} skips the command table (cli/direct.ts)`, () => {
      const r = modulesOf(args.map((a) => (a === "JOB" ? done : a)));
      expect(r.code).toBe(0);
      expect(r.modules).toContain("cli/direct.ts");
      expect(r.modules).not.toContain("cli/cli.ts");
    });

  test("status with other words (--last) goes through the command table", () => {
    const r = modulesOf(["status", "--last", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).job_id).toMatch(/^job_/);
    expect(r.modules).toContain("cli/cli.ts");
  });
});
