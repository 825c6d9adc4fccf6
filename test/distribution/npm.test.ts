// The npm packages end to end, with no network: packed with `npm pack` from the release binary, installed with
// `npm i -g` into a fresh prefix (offline, from the tarballs) and into a project, then started from another
// directory by `npx`, answering `--version` and an MCP client; and `npx -y awaitless mcp` resolved from a registry
// on 127.0.0.1, which fetches this platform's package only and runs no install script.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Transport } from "@modelcontextprotocol/server";
import { NPM_PLATFORMS, SCOPE } from "../../build/npm.ts";
import { TOOLS } from "../../src/mcp/tools/catalog.ts";
import { descendantPids } from "../helpers/sshd.ts";
import { makeClient } from "../mcp/harness.ts";
import { type FakeRegistry, hostPlatform, type Packed, packForHost, serveRegistry } from "./npm-fixture.ts";

const T = 180_000;
const npm = Bun.which("npm");
const why = !npm
  ? "npm is not installed (it comes with Node.js)"
  : !hostPlatform()
    ? `no npm platform package for ${process.platform}-${process.arch}`
    : "";
if (why && process.env.AWAITLESS_REQUIRE_ALL === "1") {
  test("the npm packages can be tested (AWAITLESS_REQUIRE_ALL=1)", () => {
    throw new Error(why);
  });
} else if (why)
  console.warn(`[skip] npm packages: ${why}. Set AWAITLESS_REQUIRE_ALL=1 to turn this skip into a failure.`);

let scratch: string;
let packed: Packed;
let prefix: string;
let registry: FakeRegistry | undefined;

/** npm's environment for one test: its own HOME, cache and config, no update checks, no audit. */
function npmEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: home,
    PATH: `${join(prefix, "bin")}:/usr/local/bin:/usr/bin:/bin`,
    npm_config_cache: join(home, ".npm"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    AWAITLESS_DATA_DIR: join(home, "data"),
    ...extra,
  };
}

function sh(argv: string[], cwd: string, env: Record<string, string>) {
  const r = Bun.spawnSync(argv, { cwd, env, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

const fresh = (name: string) => mkdtempSync(join(scratch, `${name}-`));

describe.skipIf(why !== "")("npm packages", () => {
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "awl-npm-"));
    packed = packForHost(join(scratch, "packed"));
    prefix = join(scratch, "prefix");
    const home = fresh("install-home");
    const r = sh(
      [npm!, "install", "--global", "--prefix", prefix, "--offline", packed.platform, packed.main],
      scratch,
      npmEnv(home),
    );
    if (r.code !== 0) throw new Error(`npm i -g failed (${r.code}): ${r.err}`);
  }, T);

  afterAll(() => {
    registry?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test("the tarballs hold the launcher and the binary, executable, and nothing that runs at install", () => {
    const list = (tgz: string) => sh(["tar", "tzvf", tgz], scratch, { PATH: "/usr/bin:/bin" }).out;
    expect(list(packed.main)).toMatch(/^-rwxr-xr-x .* package\/bin\/awaitless$/m);
    expect(list(packed.platform)).toMatch(/^-rwxr-xr-x .* package\/bin\/awaitless$/m);
    const manifest = JSON.parse(
      sh(["tar", "xzOf", packed.main, "package/package.json"], scratch, { PATH: "/usr/bin:/bin" }).out,
    );
    expect(manifest.scripts).toBeUndefined();
    expect(Object.keys(manifest.optionalDependencies)).toEqual(
      NPM_PLATFORMS.map((p) => `${SCOPE}/${p.name}`),
    );
    expect(manifest.bin).toEqual({
      awaitless: "bin/awaitless",
      "awaitless-mcp": "bin/awaitless",
      "awaitless-runner": "bin/awaitless",
    });
  });

  test("npm i -g puts awaitless (and 0.8's two server names) on the prefix's PATH; hints name it so", () => {
    for (const name of ["awaitless", "awaitless-mcp", "awaitless-runner"])
      expect(lstatSync(join(prefix, "bin", name)).isSymbolicLink()).toBe(true);
    const home = fresh("home");
    const r = sh(["awaitless", "--version"], home, npmEnv(home));
    expect(r.err).toBe("");
    expect(r.out).toBe(`awaitless ${packed.version}\n`);
    // Hints name the command as PATH finds it (the launcher), not the binary's path inside node_modules.
    const s = sh(["awaitless", "submit", "--", "true"], home, npmEnv(home));
    expect(s.code, s.err).toBe(0);
    expect(s.err).toContain(`wait for it: awaitless wait ${s.out.trim()}`);
  });

  test(
    "npx from another directory starts the global install: --version, and an MCP client lists every tool",
    async () => {
      const home = fresh("npx-home");
      const elsewhere = fresh("elsewhere");
      // The user's npm config names the prefix npm i -g installed into, as ~/.npmrc's prefix= would.
      const env = npmEnv(home, { npm_config_prefix: prefix });
      const v = sh([npm!.replace(/npm$/, "npx"), "--offline", "awaitless", "--version"], elsewhere, env);
      expect(v.err).toBe("");
      expect(v.out).toBe(`awaitless ${packed.version}\n`);
      await expectMcp(["--offline", "-y", "awaitless", "mcp"], elsewhere, env);
    },
    T,
  );

  test(
    "npm i into a project: node_modules/.bin/awaitless runs the binary, npx finds it there",
    () => {
      const project = fresh("project");
      const home = fresh("project-home");
      const env = npmEnv(home);
      const r = sh([npm!, "install", "--offline", packed.platform, packed.main], project, env);
      expect(r.code, r.err).toBe(0);
      const v = sh([join(project, "node_modules", ".bin", "awaitless"), "--version"], project, env);
      expect(v.out).toBe(`awaitless ${packed.version}\n`);
      const x = sh([npm!.replace(/npm$/, "npx"), "--offline", "awaitless", "version"], project, env);
      expect(x.out).toBe(`awaitless ${packed.version}\n`);
    },
    T,
  );

  test(
    "npx -y awaitless mcp from a registry: only this platform's package is fetched, no install script runs",
    async () => {
      registry = serveRegistry(packed);
      const home = fresh("registry-home");
      const elsewhere = fresh("registry-cwd");
      const env = npmEnv(home, { npm_config_registry: registry.url });
      await expectMcp(["-y", "awaitless", "mcp"], elsewhere, env);
      const tarballs = registry.requests.filter((p) => p.endsWith(".tgz")).sort();
      expect(tarballs).toEqual(
        [
          `/awaitless/-/awaitless-${packed.version}.tgz`,
          `/${SCOPE}/${packed.platformName}/-/${packed.platformName}-${packed.version}.tgz`,
        ].sort(),
      );
      // The package npx installed: the platform package beside the launcher, and no other platform's.
      const npx = join(home, ".npm", "_npx");
      const [hash] = readdirSync(npx);
      expect(readdirSync(join(npx, hash!, "node_modules", SCOPE))).toEqual([packed.platformName]);
      expect(existsSync(join(npx, hash!, "node_modules", ".bin", "awaitless"))).toBe(true);
    },
    T,
  );
});

/** Starts the server the way an MCP client entry does (`npx ARGS`) and lists its tools with the official client. */
async function expectMcp(args: string[], cwd: string, env: Record<string, string>): Promise<void> {
  const stdio = new StdioClientTransport({ command: "npx", args, env, cwd, stderr: "pipe" });
  const client = makeClient("legacy", "npm-test");
  let pid: number | null = null;
  try {
    await client.connect(stdio as unknown as Transport);
    pid = stdio.pid;
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(TOOLS).sort());
    expect(client.getServerVersion()?.name).toBe("awaitless");
  } finally {
    const tree = pid === null ? [] : [pid, ...descendantPids(pid)];
    await client.close().catch(() => {});
    for (const p of tree) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}
