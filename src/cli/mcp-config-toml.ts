// Codex's config.toml: the [mcp_servers.awaitless] table rendered, and merged as text so comments,
// key order and every other table stay exactly as the user wrote them.
import { isDeepStrictEqual } from "node:util";
import { AwaitlessError, invalid } from "../core/model/errors.ts";

const HEADER = /^\s*\[\s*mcp_servers\s*\.\s*(?:awaitless|"awaitless")\s*\]\s*(?:#.*)?$/;
const ANY_HEADER = /^\s*\[/;
const OUR_KEY = /^\s*(?:command|args|tool_timeout_sec|required)\s*=/;

/**
 * What the table gets besides the command: the server's arguments, Codex's own per-call timeout, and `required`
 * (`codex exec` then waits for the server to start, and stops with its name when it cannot, instead of going on
 * without its tools: docs/mcp.md).
 */
export interface CodexKeys {
  args: string[];
  toolTimeoutSec: number;
  required: boolean;
}

/** A TOML basic string (JSON's escapes are a subset TOML accepts). */
const tomlString = (s: string): string => JSON.stringify(s);

function keyLines(command: string, keys: CodexKeys): string[] {
  return [
    `command = ${tomlString(command)}`,
    `args = [${keys.args.map(tomlString).join(", ")}]`,
    `tool_timeout_sec = ${keys.toolTimeoutSec}`,
    ...(keys.required ? ["required = true"] : []),
  ];
}

export function renderCodexToml(command: string, keys: CodexKeys): string {
  return ["[mcp_servers.awaitless]", ...keyLines(command, keys), ""].join("\n");
}

function parseToml(text: string, file: string, what: string): Record<string, unknown> {
  try {
    return Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new AwaitlessError(
      "invalid_argument",
      `${file} ${what} is not valid TOML (${(e as Error).message})`,
      "fix the file, or add the lines printed by `awaitless mcp-config codex` by hand",
    );
  }
}

/** Bracket depth change of a line, ignoring brackets inside quoted strings and after a comment. */
function bracketDelta(line: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "#") break;
    else if (c === "[") depth++;
    else if (c === "]") depth--;
  }
  return depth;
}

/** Drops `command`, `args` (multi-line arrays included), `tool_timeout_sec` and `required` from a table's body lines. */
function withoutOurKeys(body: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < body.length; i++) {
    if (!OUR_KEY.test(body[i]!)) {
      kept.push(body[i]!);
      continue;
    }
    let depth = bracketDelta(body[i]!.slice(body[i]!.indexOf("=") + 1));
    while (depth > 0 && i + 1 < body.length) depth += bracketDelta(body[++i]!);
  }
  return kept;
}

function withoutServer(doc: Record<string, unknown>): Record<string, unknown> {
  const servers = { ...((doc.mcp_servers as Record<string, unknown> | undefined) ?? {}) };
  delete servers.awaitless;
  const { mcp_servers: _omit, ...rest } = doc;
  return Object.keys(servers).length > 0 ? { ...rest, mcp_servers: servers } : rest;
}

/**
 * Sets command/args/tool_timeout_sec/required in [mcp_servers.awaitless] (other keys in that table, such as env,
 * are kept), or appends the table. The result is re-parsed and compared with the
 * original: anything else changed means the edit is refused rather than written.
 */
export function mergeCodexToml(
  existing: string | undefined,
  command: string,
  file: string,
  keys: CodexKeys,
): { text: string; changed: boolean } {
  const original = existing ?? "";
  const before = parseToml(original, file, "as it is");
  const lines = original.split("\n");
  const at = lines.findIndex((l) => HEADER.test(l));
  let next: string[];
  if (at >= 0) {
    let end = lines.length;
    for (let i = at + 1; i < lines.length; i++) {
      if (ANY_HEADER.test(lines[i]!)) {
        end = i;
        break;
      }
    }
    next = [
      ...lines.slice(0, at + 1),
      ...keyLines(command, keys),
      ...withoutOurKeys(lines.slice(at + 1, end)),
      ...lines.slice(end),
    ];
  } else {
    const servers = before.mcp_servers as Record<string, unknown> | undefined;
    if (servers?.awaitless !== undefined)
      throw invalid(
        `${file} defines mcp_servers.awaitless in a form this command does not edit (inline table or dotted keys)`,
        "replace it by hand with the lines printed by `awaitless mcp-config codex`",
      );
    const body = original.replace(/\n*$/, "");
    next = [...(body ? [body, ""] : []), ...renderCodexToml(command, keys).split("\n")];
  }
  const text = next.join("\n").replace(/\n*$/, "\n");
  const after = parseToml(text, file, "after the edit");
  const server = (after.mcp_servers as Record<string, Record<string, unknown>> | undefined)?.awaitless;
  if (
    server?.command !== command ||
    !isDeepStrictEqual(server.args, keys.args) ||
    server.tool_timeout_sec !== keys.toolTimeoutSec ||
    (server.required === true) !== keys.required ||
    !isDeepStrictEqual(withoutServer(after), withoutServer(before))
  ) {
    throw invalid(
      `could not merge the awaitless entry into ${file} safely; the file was not changed`,
      "add the lines printed by `awaitless mcp-config codex` by hand",
    );
  }
  const previous = (before.mcp_servers as Record<string, Record<string, unknown>> | undefined)?.awaitless;
  const changed = !isDeepStrictEqual(previous, server);
  return { text: changed ? text : original, changed };
}
