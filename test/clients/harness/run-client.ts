// Runs one real agent CLI once, inside `unshare -n` (a network namespace with only loopback), against the
// scripted model and our MCP server, with a throwaway HOME; everything it started is stopped by PID before
// the run is returned.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../../helpers/cli.ts";
import { type ModelServer, startModelServer } from "./model-server.ts";
import { stopTree } from "./processes.ts";
import type { Route, Step } from "./script.ts";
import type { Reply, ToolResultSeen, Turn } from "./types.ts";

export const HARNESS = import.meta.dir;
export const CLIENTS_DIR = join(HARNESS, "..");
export const CLIENT_BIN = join(CLIENTS_DIR, "node_modules", ".bin");
export const PORT = "@PORT@";

/** Where one run lives: a throwaway HOME (with the awaitless data dir inside it) and a work directory. */
export interface RunDirs {
  root: string;
  home: string;
  work: string;
  /** The MCP traffic log written by mcp-tap.ts. */
  tapLog: string;
}

export interface Launch {
  argv: string[];
  env: Record<string, string>;
  /** Config files holding `@PORT@`, rewritten with the port inside the namespace before the client starts. */
  portFiles?: string[];
}

export type McpTarget = "claude" | "codex" | "gemini";

export interface ClientSpec {
  id: string;
  label: string;
  /** The `awaitless mcp-config` target that wires this client, when there is one. */
  mcpConfig?: McpTarget;
  /** Writes the client's own settings (provider, telemetry off, and its MCP entry when mcp-config has none). */
  setup(dirs: RunDirs, opts: RunOptions): void;
  /** The command and environment (`@PORT@` stands for the scripted model's port). */
  launch(dirs: RunDirs, opts: RunOptions): Launch;
  /** Steps the client needs before a scenario's own (Claude Code: the tool search). */
  preamble?: Step[];
  side?: (turn: Turn, body: Record<string, unknown>) => Reply;
  route?: Route;
}

export interface RunOptions {
  prompt: string;
  steps: Step[];
  /** `[defaults]` of the awaitless config in the throwaway HOME (e.g. a short inline window). */
  defaults?: Record<string, number>;
  /** Extra environment for the client (e.g. MCP_PROTOCOL_NEGOTIATION=auto). */
  env?: Record<string, string>;
  /** The client's own per-call tool timeout, where the scenario sets it (seconds). */
  clientTimeoutSeconds?: number;
  /** The client's 2026-07-28 mode. */
  modern?: boolean;
  timeoutMs: number;
}

export interface TapLine {
  at: number;
  dir: "in" | "out" | "start" | "eof" | "exit" | "signal";
  line: string;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON-RPC message
  msg?: any;
}

export interface ClientRun {
  client: ClientSpec;
  dirs: RunDirs;
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  model: ModelServer;
  /** Every tool result the model received, as the client passed it. */
  results: ToolResultSeen[];
  /** What went over the MCP pipe, both ways. */
  mcp: TapLine[];
  /** Runs `awaitless ARGS --json` against this run's data directory. */
  awaitless(args: string[]): unknown;
  dispose(): void;
}

function q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** A shell word with `@PORT@` turned into the port read inside the namespace. */
function word(s: string): string {
  return s.split(PORT).map(q).join('"$port"');
}

function writeAwaitlessConfig(dirs: RunDirs, defaults: Record<string, number> = {}): void {
  const dir = join(dirs.home, ".config", "awaitless");
  mkdirSync(dir, { recursive: true });
  const lines = Object.entries(defaults).map(([k, v]) => `${k} = ${v}`);
  writeFileSync(join(dir, "config.toml"), `[defaults]\n${lines.join("\n")}\n`);
}

/** `awaitless mcp-config TARGET --write`, then our binary in that file swapped for the tap in front of it. */
export function wireWithMcpConfig(dirs: RunDirs, target: McpTarget, file: string): void {
  const r = Bun.spawnSync([BINARY, "mcp-config", target, "--write"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0)
    throw new Error(`awaitless mcp-config ${target} --write failed: ${r.stderr.toString()}`);
  tapConfig(dirs, file);
}

/** The tap's command in place of our binary's path in a client config file. */
export function tapConfig(dirs: RunDirs, file: string): void {
  const text = readFileSync(file, "utf8");
  if (!text.includes(BINARY)) throw new Error(`${file} does not name ${BINARY}:\n${text}`);
  writeFileSync(file, text.replaceAll(BINARY, tapCommand(dirs)));
}

/** A script that runs our server behind mcp-tap.ts (so a config can name one executable). */
export function tapCommand(dirs: RunDirs): string {
  const path = join(dirs.root, "awaitless-tapped");
  if (!existsSync(path)) {
    const tap = join(HARNESS, "mcp-tap.ts");
    writeFileSync(
      path,
      `#!/bin/sh\nexec ${q(process.execPath)} ${q(tap)} ${q(dirs.tapLog)} -- ${q(BINARY)} "$@"\n`,
    );
    chmodSync(path, 0o755);
  }
  return path;
}

export function readTap(dirs: RunDirs): TapLine[] {
  if (!existsSync(dirs.tapLog)) return [];
  return readFileSync(dirs.tapLog, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const t = JSON.parse(l) as TapLine;
      if (t.dir === "in" || t.dir === "out") {
        try {
          t.msg = JSON.parse(t.line);
        } catch {
          // not JSON: kept as the line
        }
      }
      return t;
    });
}

export function makeDirs(client: string): RunDirs {
  const root = mkdtempSync(join(tmpdir(), `awl-client-${client}-`));
  const home = join(root, "home");
  const work = join(home, "work");
  mkdirSync(work, { recursive: true });
  return { root, home, work, tapLog: join(root, "mcp.jsonl") };
}

/** The shell script run inside the namespace: loopback up, the forwarder, then the client. */
export function namespaceScript(dirs: RunDirs, socket: string, launch: Launch): string {
  const forward = join(HARNESS, "forward.ts");
  const portFile = join(dirs.root, "port");
  return [
    "set -u",
    "ip link set lo up",
    `${q(process.execPath)} ${q(forward)} ${q(socket)} > ${q(portFile)} 2> ${q(join(dirs.root, "forward.err"))} &`,
    "i=0",
    `while [ ! -s ${q(portFile)} ]; do i=$((i+1)); [ $i -lt 1000 ] || { echo 'forwarder did not start' >&2; exit 97; }; sleep 0.01; done`,
    `port=$(cat ${q(portFile)})`,
    ...(launch.portFiles ?? []).map((f) => `sed -i "s/${PORT}/$port/g" ${q(f)}`),
    `cd ${q(dirs.work)}`,
    ...Object.entries(launch.env).map(([k, v]) => `export ${k}=${word(v)}`),
    `${launch.argv.map(word).join(" ")} < /dev/null`,
    "code=$?",
    "exit $code",
    "",
  ].join("\n");
}

export function baseEnv(dirs: RunDirs): Record<string, string> {
  return {
    PATH: `${CLIENT_BIN}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dirs.home,
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    TMPDIR: join(dirs.root, "tmp"),
  };
}

export async function runClient(client: ClientSpec, opts: RunOptions): Promise<ClientRun> {
  const dirs = makeDirs(client.id);
  mkdirSync(join(dirs.root, "tmp"));
  const socket = join(dirs.root, "model.sock");
  const model = startModelServer(socket, {
    steps: [...(client.preamble ?? []), ...opts.steps],
    side: client.side,
    route: client.route,
  });
  const started = Date.now();
  let pid: number | undefined;
  let timedOut = false;
  try {
    writeAwaitlessConfig(dirs, opts.defaults);
    client.setup(dirs, opts);
    const launch = client.launch(dirs, opts);
    const script = join(dirs.root, "in-namespace.sh");
    writeFileSync(
      script,
      namespaceScript(dirs, socket, {
        ...launch,
        env: { ...baseEnv(dirs), ...launch.env, ...opts.env },
      }),
    );
    const proc = Bun.spawn(["unshare", "-n", "--", "sh", script], {
      env: { PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    pid = proc.pid;
    const stdout = new Response(proc.stdout).text();
    const stderr = new Response(proc.stderr).text();
    const timer = setTimeout(() => {
      timedOut = true;
      void stopTree(proc.pid);
    }, opts.timeoutMs);
    const exitCode = await proc.exited;
    clearTimeout(timer);
    return {
      client,
      dirs,
      exitCode: timedOut ? null : exitCode,
      timedOut,
      stdout: await stdout,
      stderr: await stderr,
      durationMs: Date.now() - started,
      model,
      results: model.results(),
      mcp: readTap(dirs),
      awaitless: (args) => awaitlessJson(dirs, args),
      dispose() {
        model.stop();
        rmSync(dirs.root, { recursive: true, force: true });
      },
    };
  } catch (e) {
    model.stop();
    rmSync(dirs.root, { recursive: true, force: true });
    throw e;
  } finally {
    if (pid !== undefined) await stopTree(pid);
    await stopJobs(dirs);
  }
}

export function awaitlessJson(dirs: RunDirs, args: string[]): unknown {
  const r = Bun.spawnSync([BINARY, ...args, "--json"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home },
    stdout: "pipe",
    stderr: "pipe",
  });
  const text = r.stdout.toString();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`awaitless ${args.join(" ")} printed no JSON (exit ${r.exitCode}): ${text}${r.stderr}`);
  }
}

/** Jobs outlive their client by design: the run's still-active jobs are cancelled (by the CLI, by ID). */
export async function stopJobs(dirs: RunDirs): Promise<void> {
  if (!existsSync(join(dirs.home, ".local"))) return;
  try {
    const list = awaitlessJson(dirs, ["list", "--state", "active"]) as { jobs?: Array<{ job_id: string }> };
    for (const j of list.jobs ?? []) awaitlessJson(dirs, ["cancel", j.job_id]);
  } catch {
    // no data directory: nothing ran
  }
}
