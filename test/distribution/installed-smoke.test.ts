// The installed binary works as a user gets it: install.sh from a loopback release into a temp HOME,
// then `demo`, `mcp` listed by the official MCP client, and `mcp-config --write` pointing at it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Transport } from "@modelcontextprotocol/server";
import { TOOLS } from "../../src/mcp/tools/catalog.ts";
import { makeClient } from "../mcp/harness.ts";
import { INSTALL_SH, type ReleaseServer, releaseCache, serveReleases } from "./release-fixture.ts";

let home: string;
let bin: string;
let server: ReleaseServer;
let env: Record<string, string>;

beforeAll(async () => {
  const cache = releaseCache(["linux-x64"]);
  server = serveReleases(
    { "0.1.0": { assets: { "awaitless-linux-x64": join(cache, "awaitless-linux-x64") } } },
    "0.1.0",
  );
  home = realpathSync(mkdtempSync(join(tmpdir(), "awl-smoke-")));
  bin = join(home, ".local", "bin", "awaitless");
  env = { HOME: home, PATH: `${join(home, ".local", "bin")}:/usr/bin:/bin`, NO_COLOR: "1" };
  const proc = Bun.spawn(["sh", INSTALL_SH], {
    env: { ...env, AWAITLESS_DOWNLOAD_URL: server.url, AWAITLESS_TARGET: "linux-x64" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`install.sh failed (${code}): ${stderr}`);
}, 120_000);

afterAll(() => {
  server?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

test("`awaitless demo` runs the recovery story from the installed binary", async () => {
  const proc = Bun.spawn([bin, "demo"], { cwd: home, env, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  expect(code, stderr).toBe(0);
  expect(stdout + stderr).toMatch(/job_/);
}, 60_000);

test("`awaitless mcp` from the installed binary lists every tool to the official client", async () => {
  const stdio = new StdioClientTransport({ command: bin, args: ["mcp"], env, cwd: home, stderr: "pipe" });
  const client = makeClient("legacy", "smoke");
  try {
    await client.connect(stdio as unknown as Transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(TOOLS).sort());
    expect(tools.find((t) => t.name === "run")?.description).toBe(TOOLS.run!.description);
  } finally {
    await client.close().catch(() => {});
    const pid = stdio.pid;
    if (pid !== null) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}, 60_000);

test("`mcp-config gemini --write` points the client at the installed binary's absolute path", () => {
  const r = Bun.spawnSync([bin, "mcp-config", "gemini", "--write"], { env, stdout: "pipe", stderr: "pipe" });
  expect(r.exitCode, r.stderr.toString()).toBe(0);
  const settings = JSON.parse(readFileSync(join(home, ".gemini", "settings.json"), "utf8"));
  expect(settings.mcpServers.awaitless).toEqual({
    command: bin,
    args: ["mcp", "--hold-seconds", "540"],
    timeout: 600000,
  });
}, 30_000);
