// Runs one real agent CLI once, inside `unshare -n` (a network namespace with only loopback), against the
// scripted model and our MCP server, with a throwaway HOME; everything it started is stopped by PID before
// the run is returned.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelServer, startModelServer } from "./model-server.ts";
import { stopTree } from "./processes.ts";
import type { Route, Step } from "./script.ts";
import type { Reply, ToolResultSeen, Turn } from "./types.ts";
import {
  awaitlessJson,
  HARNESS,
  type McpTarget,
  makeDirs,
  q,
  type RunDirs,
  readTap,
  type ServerStart,
  shapeStart,
  stopJobs,
  type TapLine,
  writeAwaitlessConfig,
} from "./wiring.ts";

export const CLIENTS_DIR = join(HARNESS, "..");
export const CLIENT_BIN = join(CLIENTS_DIR, "node_modules", ".bin");
export const PORT = "@PORT@";

export interface Launch {
  argv: string[];
  env: Record<string, string>;
  /** Config files holding `@PORT@`, rewritten with the port inside the namespace before the client starts. */
  portFiles?: string[];
  /** A terminal program (tmux gives it the terminal): its stdin is left alone. */
  interactive?: boolean;
}

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
  /** Our hold (`--hold-seconds`) in place of the one the wiring wrote (measurements hold past a client's limit). */
  holdSeconds?: number;
  /** The client's 2026-07-28 mode. */
  modern?: boolean;
  /** Our server starting late or failing to start (measure.ts --startup). */
  serverStart?: ServerStart;
  /** Codex: the entry's `required` (mcp-config's choice when left out). */
  required?: boolean;
  timeoutMs: number;
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

/** A shell word with `@PORT@` turned into the port read inside the namespace. */
function word(s: string): string {
  return s.split(PORT).map(q).join('"$port"');
}

/** The shell script run inside the namespace: loopback up, the forwarder, then the client. */
export function namespaceScript(dirs: RunDirs, socket: string, launch: Launch): string {
  const forward = join(HARNESS, "forward.ts");
  const portFile = join(dirs.root, "port");
  return [
    "set -u",
    "ip link set lo up",
    `${q(process.execPath)} ${q(forward)} ${q(socket)} > ${q(portFile)} 2> ${q(join(dirs.root, "forward.err"))} &`,
    // The forwarder is this script's child: stopped when the script ends, however it ends.
    "fwd=$!",
    `trap 'kill "$fwd" 2>/dev/null' EXIT`,
    "trap 'exit 143' TERM INT HUP",
    "i=0",
    `while [ ! -s ${q(portFile)} ]; do i=$((i+1)); [ $i -lt 6000 ] || { echo 'forwarder did not start in 60 s' >&2; exit 97; }; sleep 0.01; done`,
    `port=$(cat ${q(portFile)})`,
    ...(launch.portFiles ?? []).map((f) => `sed -i "s/${PORT}/$port/g" ${q(f)}`),
    `cd ${q(dirs.work)}`,
    ...Object.entries(launch.env).map(([k, v]) => `export ${k}=${word(v)}`),
    `${launch.argv.map(word).join(" ")}${launch.interactive ? "" : " < /dev/null"}`,
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

/** A run made ready: its directories, the scripted model listening, the in-namespace script written. */
export interface Prepared {
  dirs: RunDirs;
  model: ModelServer;
  /** `unshare -n -- sh SCRIPT` runs the client. */
  script: string;
  dispose(): void;
}

export function prepare(client: ClientSpec, opts: RunOptions, extra: Partial<Launch> = {}): Prepared {
  const dirs = makeDirs(client.id);
  mkdirSync(join(dirs.root, "tmp"));
  const socket = join(dirs.root, "model.sock");
  const model = startModelServer(socket, {
    steps: [...(client.preamble ?? []), ...opts.steps],
    side: client.side,
    route: client.route,
  });
  const dispose = () => {
    model.stop();
    rmSync(dirs.root, { recursive: true, force: true });
  };
  try {
    writeAwaitlessConfig(dirs, opts.defaults);
    client.setup(dirs, opts);
    shapeStart(dirs, opts.serverStart);
    const launch = { ...client.launch(dirs, opts), ...extra };
    const script = join(dirs.root, "in-namespace.sh");
    const env = { ...baseEnv(dirs), ...launch.env, ...opts.env, ...extra.env };
    writeFileSync(script, namespaceScript(dirs, socket, { ...launch, env }));
    return { dirs, model, script, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}

export async function runClient(client: ClientSpec, opts: RunOptions): Promise<ClientRun> {
  const { dirs, model, script, dispose } = prepare(client, opts);
  const started = Date.now();
  let pid: number | undefined;
  let timedOut = false;
  try {
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
      dispose,
    };
  } catch (e) {
    dispose();
    throw e;
  } finally {
    if (pid !== undefined) await stopTree(pid);
    await stopJobs(dirs);
  }
}
