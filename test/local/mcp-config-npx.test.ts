// `mcp-config --npx` through the compiled binary: the entry starts the server with `npx -y awaitless mcp …` for every
// client (printed, as JSON, merged into JSON and Codex TOML files), keeps the client's hold; and a binary running
// from npx's cache is told that its path may vanish.
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launched, NPX_LAUNCHER, npxCacheNote } from "../../src/cli/mcp-config-npx.ts";
import { BINARY, requireBinary } from "../helpers/cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "awl-mcpcfg-npx-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function run(home: string, args: string[], bin = BINARY) {
  requireBinary();
  const r = Bun.spawnSync([bin, "mcp-config", ...args], {
    env: { HOME: home, PATH: "/usr/bin:/bin", NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test("the launcher goes before the server's arguments; without one the entry is unchanged", () => {
  const entry = { command: "/opt/awaitless", args: ["mcp", "--hold-seconds", "50"], timeout: 1 };
  expect(launched(entry, NPX_LAUNCHER)).toEqual({
    command: "npx",
    args: ["-y", "awaitless", "mcp", "--hold-seconds", "50"],
    timeout: 1,
  });
  expect(launched(entry, undefined)).toBe(entry);
  // An entry whose command is one argv array (opencode's shape).
  expect(
    launched({ type: "local", command: ["/opt/awaitless", "mcp"], timeout: 600000 }, NPX_LAUNCHER),
  ).toEqual({
    type: "local",
    command: ["npx", "-y", "awaitless", "mcp"],
    timeout: 600000,
  });
  expect(npxCacheNote("/home/u/.npm/_npx/8a3f/node_modules/@awaitless/linux-x64/bin/awaitless")).toContain(
    "--npx",
  );
  expect(
    npxCacheNote("/usr/lib/node_modules/awaitless/node_modules/@awaitless/linux-x64/bin/awaitless"),
  ).toBe(undefined);
});

test("--npx prints and --json-prints the npx entry, with the client's hold and timeout", () => {
  const home = mkdtempSync(join(scratch, "home-"));
  const gemini = run(home, ["gemini", "--npx", "--json"]);
  expect(gemini.code, gemini.stderr).toBe(0);
  expect(JSON.parse(gemini.stdout).entry).toEqual({
    command: "npx",
    args: ["-y", "awaitless", "mcp", "--hold-seconds", "540"],
    timeout: 600000,
  });
  const claude = run(home, ["claude", "--npx"]);
  expect(JSON.parse(claude.stdout).mcpServers.awaitless).toEqual({
    command: "npx",
    args: ["-y", "awaitless", "mcp", "--hold-seconds", "110"],
  });
  expect(claude.stderr).toContain("claude mcp add awaitless -- npx -y awaitless mcp --hold-seconds 110");
  expect(claude.stderr).toContain("awaitless mcp-config claude --npx --write");
  const codex = run(home, ["codex", "--npx"]);
  expect(codex.stdout).toContain(
    'command = "npx"\nargs = ["-y", "awaitless", "mcp", "--hold-seconds", "540"]',
  );
});

test("--npx --write merges the npx entry into JSON and Codex files, keeping what is there", () => {
  const home = mkdtempSync(join(scratch, "home-"));
  mkdirSync(join(home, ".cursor"));
  writeFileSync(
    join(home, ".cursor", "mcp.json"),
    JSON.stringify({
      mcpServers: {
        other: { command: "x" },
        awaitless: { command: "/old/path", args: ["mcp"], env: { A: "1" } },
      },
    }),
  );
  const c = run(home, ["cursor", "--npx", "--write"]);
  expect(c.code, c.stderr).toBe(0);
  expect(c.stdout).toContain("(npx -y awaitless mcp --hold-seconds 50)");
  const cursor = JSON.parse(readFileSync(join(home, ".cursor", "mcp.json"), "utf8")).mcpServers;
  expect(cursor.other).toEqual({ command: "x" });
  expect(cursor.awaitless).toEqual({
    command: "npx",
    args: ["-y", "awaitless", "mcp", "--hold-seconds", "50"],
    env: { A: "1" },
  });
  const x = run(home, ["codex", "--npx", "--write"]);
  expect(x.code, x.stderr).toBe(0);
  const doc = Bun.TOML.parse(readFileSync(join(home, ".codex", "config.toml"), "utf8")) as {
    mcp_servers: { awaitless: Record<string, unknown> };
  };
  expect(doc.mcp_servers.awaitless).toEqual({
    command: "npx",
    args: ["-y", "awaitless", "mcp", "--hold-seconds", "540"],
    tool_timeout_sec: 600,
    required: true,
  });
  // Without --npx the same command puts this binary's path back.
  expect(run(home, ["cursor", "--write"]).code).toBe(0);
  expect(
    JSON.parse(readFileSync(join(home, ".cursor", "mcp.json"), "utf8")).mcpServers.awaitless.command,
  ).toBe(BINARY);
});

test("a binary running from npx's cache says its path may vanish and names --npx", () => {
  const home = mkdtempSync(join(scratch, "home-"));
  const cached = join(home, ".npm", "_npx", "0123abcd", "node_modules", "@awaitless", "linux-x64", "bin");
  mkdirSync(cached, { recursive: true });
  copyFileSync(BINARY, join(cached, "awaitless"));
  Bun.spawnSync(["chmod", "755", join(cached, "awaitless")]);
  const r = run(home, ["gemini"], join(cached, "awaitless"));
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain("runs from npx's cache");
  expect(r.stderr).toContain("--npx");
  expect(run(home, ["gemini", "--npx"], join(cached, "awaitless")).stderr).not.toContain("npx's cache");
});
