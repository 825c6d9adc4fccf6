// `mcp-config` through the compiled binary: it prints the entry with its own absolute path, `--write` merges into
// each client's file (with a backup) the hold that client gets, and unknown clients are usage errors. The merges
// themselves, on sample files, are in test/unit/mcp-config.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, requireBinary } from "../helpers/cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "awl-mcpcfg-bin-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// biome-ignore lint/suspicious/noExplicitAny: parsed TOML, read in assertions only
type Toml = Record<string, any>;

/** A Codex config written by hand: our table with an old entry, another server, a profile. */
const CODEX_SAMPLE = `model = "gpt-5"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.awaitless]
command = "awaitless"
args = ["mcp"]
tool_timeout_sec = 120
`;

describe("awaitless mcp-config (compiled binary)", () => {
  const run = (home: string, args: string[]) => {
    requireBinary();
    const r = Bun.spawnSync([BINARY, "mcp-config", ...args], {
      env: { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  test("prints the entry with the binary's absolute path", () => {
    const r = run(scratch, ["cursor", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      client: "cursor",
      entry: { command: BINARY, args: ["mcp", "--hold-seconds", "50"] },
      file: join(scratch, ".cursor", "mcp.json"),
    });
  });

  test("--write merges into ~/.codex/config.toml with a backup; unknown clients are usage errors", () => {
    const home = join(scratch, "h2");
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(join(home, ".codex", "config.toml"), CODEX_SAMPLE);
    const r = run(home, ["codex", "--write"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("backup:");
    const doc = Bun.TOML.parse(readFileSync(join(home, ".codex", "config.toml"), "utf8")) as Toml;
    expect(doc.mcp_servers.awaitless.command).toBe(BINARY);
    expect(doc.mcp_servers.awaitless.args).toEqual(["mcp", "--hold-seconds", "540"]);
    expect(doc.mcp_servers.awaitless.tool_timeout_sec).toBe(600);
    // codex exec waits for it to start, and stops naming it when it cannot (docs/mcp.md)
    expect(doc.mcp_servers.awaitless.required).toBe(true);
    expect(doc.mcp_servers.docs).toEqual({ command: "npx", args: ["-y", "docs-mcp"] });
    expect(readdirSync(join(home, ".codex")).some((f) => f.startsWith("config.toml.bak-"))).toBe(true);
    const bad = run(home, ["vim"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("use one of: claude, codex, cursor, gemini, opencode, qwen, json");
    expect(run(home, ["json", "--write"]).code).toBe(2);
    expect(existsSync(join(home, ".gemini"))).toBe(false);
  });
});

describe("each wired client holds under its own limit, as written", () => {
  test("--write for claude, gemini and cursor writes the hold (and Gemini's timeout) into a temp HOME", () => {
    requireBinary();
    const home = join(scratch, "h3");
    mkdirSync(home);
    const write = (client: string) =>
      Bun.spawnSync([BINARY, "mcp-config", client, "--write"], {
        env: { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
    for (const client of ["claude", "gemini", "cursor", "opencode", "qwen"])
      expect(write(client).exitCode).toBe(0);
    const read = (f: string) => JSON.parse(readFileSync(join(home, f), "utf8")).mcpServers.awaitless;
    expect(read(".claude.json")).toEqual({ command: BINARY, args: ["mcp", "--hold-seconds", "110"] });
    expect(read(".gemini/settings.json")).toEqual({
      command: BINARY,
      args: ["mcp", "--hold-seconds", "540"],
      timeout: 600000,
    });
    expect(read(".cursor/mcp.json")).toEqual({ command: BINARY, args: ["mcp", "--hold-seconds", "50"] });
    expect(read(".qwen/settings.json")).toEqual({
      command: BINARY,
      args: ["mcp", "--hold-seconds", "540"],
      timeout: 600000,
    });
    expect(
      JSON.parse(readFileSync(join(home, ".config/opencode/opencode.json"), "utf8")).mcp.awaitless,
    ).toEqual({
      type: "local",
      command: [BINARY, "mcp", "--hold-seconds", "540"],
      timeout: 600000,
    });
  });

  test("mcp-config claude says how to let a job's end wake the session (its channels)", () => {
    requireBinary();
    const home = join(scratch, "h4");
    mkdirSync(home);
    const env = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1" };
    // the 2025 handshake too: Claude Code 2.1.332 opens a 2026-07-28 connection by default and skips channels on it
    const flag =
      "start it with MCP_PROTOCOL_NEGOTIATION=legacy claude --dangerously-load-development-channels server:awaitless";
    const printed = Bun.spawnSync([BINARY, "mcp-config", "claude"], { env, stdout: "pipe", stderr: "pipe" });
    expect(JSON.parse(printed.stdout.toString()).mcpServers.awaitless.args).toEqual([
      "mcp",
      "--hold-seconds",
      "110",
    ]);
    expect(printed.stderr.toString()).toContain(flag);
    const written = Bun.spawnSync([BINARY, "mcp-config", "claude", "--write"], {
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(written.stdout.toString()).toContain(flag);
    const other = Bun.spawnSync([BINARY, "mcp-config", "gemini"], { env, stdout: "pipe", stderr: "pipe" });
    expect(other.stderr.toString()).not.toContain("channels");
  });
});
