// A run's directories and wiring: the throwaway HOME, our config in it, the client's MCP entry (written by
// `awaitless mcp-config` where it has the client) with our binary behind the MCP tap, and the CLI on its data.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY } from "../../helpers/cli.ts";

export const HARNESS = import.meta.dir;

export type McpTarget = "claude" | "codex" | "gemini" | "opencode" | "qwen";

/** Where one run lives: a throwaway HOME (with the awaitless data dir inside it) and a work directory. */
export interface RunDirs {
  root: string;
  home: string;
  work: string;
  /** The MCP traffic log written by mcp-tap.ts. */
  tapLog: string;
}

export interface TapLine {
  at: number;
  dir: "in" | "out" | "err" | "start" | "eof" | "exit" | "signal";
  line: string;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON-RPC message
  msg?: any;
}

export function q(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export function makeDirs(client: string): RunDirs {
  const root = mkdtempSync(join(tmpdir(), `awl-client-${client}-`));
  const home = join(root, "home");
  const work = join(home, "work");
  mkdirSync(work, { recursive: true });
  return { root, home, work, tapLog: join(root, "mcp.jsonl") };
}

export function writeAwaitlessConfig(dirs: RunDirs, defaults: Record<string, number> = {}): void {
  const dir = join(dirs.home, ".config", "awaitless");
  mkdirSync(dir, { recursive: true });
  const lines = Object.entries(defaults).map(([k, v]) => `${k} = ${v}`);
  writeFileSync(join(dir, "config.toml"), `[defaults]\n${lines.join("\n")}\n`);
}

/** Whether this build's `awaitless mcp-config` has a target for the client. */
export function mcpConfigHas(target: McpTarget): boolean {
  return Bun.spawnSync([BINARY, "mcp-config", target], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
}

/** Our hold in a config that mcp-config wrote (`"--hold-seconds", "N"` in JSON or TOML), for measurements. */
export function setHold(file: string, seconds: number | undefined): void {
  if (seconds === undefined) return;
  const text = readFileSync(file, "utf8");
  const next = text.replace(/("--hold-seconds",\s*)"\d+"/, `$1"${seconds}"`);
  if (next === text) throw new Error(`${file} has no --hold-seconds to set:\n${text}`);
  writeFileSync(file, next);
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

/** How our server starts in a run: as built, after a delay (a loaded machine), or not at all (a broken entry). */
export interface ServerStart {
  delaySeconds?: number;
  fails?: boolean;
}

/** The tapped command of `tapCommand`, made to start late or to fail at once (measurements of a client's startup). */
export function shapeStart(dirs: RunDirs, start: ServerStart | undefined): void {
  if (start === undefined) return;
  const path = tapCommand(dirs);
  const body = readFileSync(path, "utf8").replace("#!/bin/sh\n", "");
  const before = start.fails
    ? "echo 'awaitless: cannot start (a broken entry, measured)' >&2; exit 1\n"
    : `sleep ${start.delaySeconds ?? 0}\n`;
  writeFileSync(path, `#!/bin/sh\n${before}${body}`);
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
