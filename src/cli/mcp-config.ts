// `awaitless mcp-config`: the MCP server entry for each client, printed or merged into its config file.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { AwaitlessError, EXIT, invalid } from "../core/model/errors.ts";
import { didYouMean } from "../core/util/nearest-name.ts";
import type { CliIo } from "./cli-io.ts";
import { commandLine, type Launcher, launched, NPX_LAUNCHER, npxCacheNote } from "./mcp-config-npx.ts";
import { type CodexKeys, mergeCodexToml, renderCodexToml } from "./mcp-config-toml.ts";

export const MCP_CLIENTS = ["claude", "codex", "cursor", "gemini", "opencode", "qwen", "json"] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];
export const SERVER_NAME = "awaitless";

/** The `mcpServers` entry most clients take; opencode's `mcp` entry has its own shape (one command array). */
export type ServerEntry =
  | { command: string; args: string[]; timeout?: number }
  | { type: "local"; command: string[]; timeout: number };

/**
 * What each wired client gets (docs/mcp.md has the table and its sources): the client's own per-call timeout
 * where it has one, and a hold (`awaitless mcp --hold-seconds N`) that ends before that limit.
 */
export const WIRED_HOLDS: Record<McpClient, { holdSeconds?: number; clientTimeoutSeconds?: number }> = {
  // Claude Code backgrounds a call still open after 120 s; its own per-call timeout is far longer.
  claude: { holdSeconds: 110 },
  // Codex CLI: tool_timeout_sec (300 s by default, measured) raised to 600 s; `required = true` beside it.
  codex: { holdSeconds: 540, clientTimeoutSeconds: 600 },
  // Gemini CLI: per-server timeout in ms (600 000 by default), written explicitly.
  gemini: { holdSeconds: 540, clientTimeoutSeconds: 600 },
  // opencode: per-server timeout in ms (60 000 by default, reset by progress), written as 600 000.
  opencode: { holdSeconds: 540, clientTimeoutSeconds: 600 },
  // Qwen Code: per-server timeout in ms (600 000 by default), written explicitly.
  qwen: { holdSeconds: 540, clientTimeoutSeconds: 600 },
  // Cursor: no per-server timeout known; it gives up after about a minute.
  cursor: { holdSeconds: 50 },
  json: {},
};

/** `awaitless mcp`, with the client's hold when it has one. */
export function serverArgs(client: McpClient): string[] {
  const hold = WIRED_HOLDS[client].holdSeconds;
  return hold === undefined ? ["mcp"] : ["mcp", "--hold-seconds", String(hold)];
}

/** The entry each client gets (docs/mcp.md shows the same shapes). */
export function serverEntry(client: McpClient, command: string): ServerEntry {
  const timeoutMs = (WIRED_HOLDS[client].clientTimeoutSeconds ?? 0) * 1000;
  if (client === "opencode")
    return { type: "local", command: [command, ...serverArgs(client)], timeout: timeoutMs };
  const entry: ServerEntry = { command, args: serverArgs(client) };
  if (client === "gemini" || client === "qwen") entry.timeout = timeoutMs;
  return entry;
}

/** The key of the JSON config that holds the servers: opencode's `mcp`, every other client's `mcpServers`. */
export const serversKey = (client: McpClient): string => (client === "opencode" ? "mcp" : "mcpServers");

export function renderConfig(client: McpClient, command: string, launcher?: Launcher): string {
  if (client === "codex") return renderCodexToml(launcher?.command ?? command, codexKeys(launcher));
  const entry = launched(serverEntry(client, command), launcher);
  return `${JSON.stringify({ [serversKey(client)]: { [SERVER_NAME]: entry } }, null, 2)}\n`;
}

/**
 * The command line that lets a finished job wake a Claude Code session (docs/mcp.md, channels): its channels are a
 * research preview enabled per launch, and only on a 2025-era connection (Claude Code skips them on a 2026-07-28
 * one, which it opens by default), which MCP_PROTOCOL_NEGOTIATION=legacy selects.
 */
export const CLAUDE_CHANNEL_COMMAND = `MCP_PROTOCOL_NEGOTIATION=legacy claude --dangerously-load-development-channels server:${SERVER_NAME}`;

export const CLAUDE_CHANNEL_NOTE =
  `# to have a job's end wake an idle session (Claude Code channels, a research preview; they need the 2025 ` +
  `handshake, which the variable selects): start it with ${CLAUDE_CHANNEL_COMMAND}\n`;

/** Each client's user-level config file; `json` has none. */
export function configPath(client: McpClient, env: Record<string, string | undefined>): string | undefined {
  const home = env.HOME;
  if (client === "json") return undefined;
  if (client === "codex" && env.CODEX_HOME) return join(env.CODEX_HOME, "config.toml");
  if (client === "qwen" && env.QWEN_HOME) return join(env.QWEN_HOME, "settings.json");
  if (client === "opencode" && env.XDG_CONFIG_HOME)
    return opencodeFile(join(env.XDG_CONFIG_HOME, "opencode"));
  if (!home) throw invalid("HOME is not set, so the client's config file is unknown", "pass --file <path>");
  return {
    claude: join(home, ".claude.json"),
    codex: join(home, ".codex", "config.toml"),
    cursor: join(home, ".cursor", "mcp.json"),
    gemini: join(home, ".gemini", "settings.json"),
    opencode: opencodeFile(join(home, ".config", "opencode")),
    qwen: join(home, ".qwen", "settings.json"),
  }[client];
}

/** opencode's global config: opencode.json, or the opencode.jsonc a user already has instead. */
function opencodeFile(dir: string): string {
  const json = join(dir, "opencode.json");
  const jsonc = join(dir, "opencode.jsonc");
  return !existsSync(json) && existsSync(jsonc) ? jsonc : json;
}

/** The absolute path of the running binary (process.execPath in the compiled binary). */
export function binaryPath(): { path: string; compiled: boolean } {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  return { path: compiled ? process.execPath : "awaitless", compiled };
}

export interface Merged {
  text: string;
  changed: boolean;
}

/** Sets mcpServers.awaitless (opencode: mcp.awaitless) in a JSON config, keeping every other key, server and the file's indent. */
export function mergeJson(
  existing: string | undefined,
  entry: ServerEntry,
  file: string,
  key = "mcpServers",
): Merged {
  let doc: Record<string, unknown> = {};
  let indent: string | number = 2;
  if (existing !== undefined && existing.trim() !== "") {
    try {
      doc = JSON.parse(existing);
    } catch (e) {
      throw new AwaitlessError(
        "invalid_argument",
        `${file} is not plain JSON (${(e as Error).message})`,
        "fix the file, or add the entry printed by `awaitless mcp-config <client>` by hand",
      );
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc))
      throw invalid(`${file} does not hold a JSON object`, "fix the file or pass another one with --file");
    indent = existing.match(/\n([ \t]+)"/)?.[1] ?? 2;
  }
  const servers = doc[key] ?? {};
  if (typeof servers !== "object" || servers === null || Array.isArray(servers))
    throw invalid(`${file}: "${key}" is not an object`, "fix that key, then run this command again");
  const previous = (servers as Record<string, unknown>)[SERVER_NAME];
  const merged = {
    ...(typeof previous === "object" && previous !== null ? previous : {}),
    ...entry,
  };
  const changed = JSON.stringify(previous) !== JSON.stringify(merged);
  const next = { ...doc, [key]: { ...(servers as object), [SERVER_NAME]: merged } };
  return { text: changed ? `${JSON.stringify(next, null, indent)}\n` : (existing ?? ""), changed };
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export interface WriteOutcome {
  file: string;
  changed: boolean;
  backup?: string;
}

/** Merges the entry into `file` (created if missing): backup first, then an atomic rename; symlinks followed. */
export function writeConfig(
  client: McpClient,
  command: string,
  file: string,
  now = new Date(),
  launcher?: Launcher,
): WriteOutcome {
  const target = existsSync(file) ? realpathSync(file) : file;
  const existing = existsSync(target) ? readFileSync(target, "utf8") : undefined;
  const merged =
    client === "codex"
      ? mergeCodexToml(existing, launcher?.command ?? command, file, codexKeys(launcher))
      : mergeJson(existing, launched(serverEntry(client, command), launcher), file, serversKey(client));
  if (!merged.changed) return { file, changed: false };
  mkdirSync(dirname(target), { recursive: true });
  let backup: string | undefined;
  let mode = client === "claude" ? 0o600 : 0o644;
  if (existing !== undefined) {
    backup = `${target}.bak-${stamp(now)}`;
    for (let n = 1; existsSync(backup); n++) backup = `${target}.bak-${stamp(now)}-${n}`;
    copyFileSync(target, backup);
    mode = statSync(target).mode & 0o777;
  }
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, merged.text, { mode });
  renameSync(tmp, target);
  return { file, changed: true, ...(backup ? { backup } : {}) };
}

function codexKeys(launcher?: Launcher): CodexKeys {
  const args = [...(launcher?.args ?? []), ...serverArgs("codex")];
  return { args, toolTimeoutSec: WIRED_HOLDS.codex.clientTimeoutSeconds!, required: true };
}

function parseClient(raw: string | undefined): McpClient {
  const c = (raw ?? "json").toLowerCase();
  if ((MCP_CLIENTS as readonly string[]).includes(c)) return c as McpClient;
  throw invalid(
    `unknown MCP client ${JSON.stringify(raw)}${didYouMean(c, MCP_CLIENTS)}`,
    `use one of: ${MCP_CLIENTS.join(", ")}`,
  );
}

export async function mcpConfigCommand(
  rawClient: string | undefined,
  opts: { write?: boolean; file?: string; json?: boolean; npx?: boolean },
  io: CliIo,
): Promise<number> {
  const client = parseClient(rawClient);
  const { path: command, compiled } = binaryPath();
  const launcher = opts.npx ? NPX_LAUNCHER : undefined;
  if (!compiled && !launcher)
    io.stderr.write("note: not running from the compiled binary; the entry uses `awaitless` from PATH\n");
  if (!launcher) io.stderr.write(npxCacheNote(command) ?? "");
  const entry = launched(serverEntry(client, command), launcher);
  const file = opts.file ?? configPath(client, io.env);
  if (!opts.write) {
    if (opts.json) {
      io.stdout.write(`${JSON.stringify({ client, entry, file })}\n`);
      return EXIT.ok;
    }
    io.stdout.write(renderConfig(client, command, launcher));
    const again = `awaitless mcp-config ${client}${launcher ? " --npx" : ""} --write`;
    const where = file ? `merge it into ${file}: ${again}` : "";
    if (client === "claude")
      io.stderr.write(`# or: claude mcp add ${SERVER_NAME} -- ${commandLine(entry)}\n`);
    if (where) io.stderr.write(`# ${where}\n`);
    if (client === "claude") io.stderr.write(CLAUDE_CHANNEL_NOTE);
    return EXIT.ok;
  }
  if (!file)
    throw invalid(
      "`json` has no config file of its own",
      "pass --file <path>, or name a client (claude, codex…)",
    );
  const r = writeConfig(client, command, file, new Date(), launcher);
  if (opts.json) io.stdout.write(`${JSON.stringify(r)}\n`);
  else if (!r.changed) io.stdout.write(`${file} already has this ${SERVER_NAME} entry; nothing changed\n`);
  else
    io.stdout.write(
      `added the ${SERVER_NAME} server (${commandLine(entry)}) to ${file}${r.backup ? `; backup: ${r.backup}` : ""}\n` +
        `restart ${client === "json" ? "the client" : client} to load it\n`,
    );
  if (client === "claude" && !opts.json) io.stdout.write(CLAUDE_CHANNEL_NOTE.slice(2));
  return EXIT.ok;
}
