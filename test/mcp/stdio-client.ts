// Spawns `awaitless mcp` (the compiled binary) and connects the official client to it over stdio.
import { afterAll, beforeAll } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Transport } from "@modelcontextprotocol/server";
import { type Era, makeClient, TapTransport } from "./harness.ts";

export const ROOT = path.join(import.meta.dir, "..", "..");
/** The binary under test: dist/awaitless, or AWAITLESS_TEST_BIN when set. */
export const BINARY = process.env.AWAITLESS_TEST_BIN || path.join(ROOT, "dist", "awaitless");

export function requireBinary(): void {
  if (!existsSync(BINARY))
    throw new Error(`${BINARY} is missing: run \`bun run build\` first (npm test does it for you)`);
}

/** A private data dir and environment for one test's server processes. */
export function makeSandbox(extraEnv: Record<string, string> = {}) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), "awl-mcp-")));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: root,
    AWAITLESS_DATA_DIR: path.join(root, "data"),
    AWAITLESS_CONFIG: path.join(root, "config.toml"),
    NO_COLOR: "1",
    ...extraEnv,
  };
  Bun.spawnSync(["sh", "-c", ': > "$1"', "sh", env.AWAITLESS_CONFIG!]);
  return { root, env, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** `launch` replaces `awaitless mcp`, e.g. a link named awaitless-mcp with `--config FILE`; `capabilities` are the client's. */
export async function connectStdio(
  era: Era,
  env: Record<string, string>,
  cwd: string,
  name?: string,
  launch: { command: string; args: string[] } = { command: BINARY, args: ["mcp"] },
  capabilities: Record<string, unknown> = {},
) {
  requireBinary();
  const stdio = new StdioClientTransport({ ...launch, env, cwd, stderr: "pipe" });
  let stderr = "";
  stdio.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Wrapped, so the client's discover probe runs in place instead of in a second spawned process.
  const tap = new TapTransport(stdio as unknown as Transport);
  const client = makeClient(era, name, capabilities);
  await client.connect(tap);
  const pid = stdio.pid;
  return {
    client,
    tap,
    pid,
    stderr: () => stderr,
    close: async () => {
      await client.close().catch(() => {});
      if (pid !== null) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
  };
}

/** A sandbox and one modern client for a describe block: connected before its tests, closed and removed after. */
export function stdioSession() {
  const box = makeSandbox();
  const session = { box, conn: undefined as Awaited<ReturnType<typeof connectStdio>> | undefined };
  beforeAll(async () => {
    session.conn = await connectStdio("modern", box.env, box.root);
  });
  afterAll(async () => {
    await session.conn?.close();
    box.remove();
  });
  return session;
}
