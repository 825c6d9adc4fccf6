// What the server knows of each agent client: its name, the hold that fits its limit, what its model reads.

/**
 * Which part of a tool result a client hands its model: `structuredContent` as JSON, the text blocks, both one
 * after the other, or the raw result as JSON (text and structuredContent both; `raw-text-twice`: with the text
 * blocks a second time).
 */
export type ModelReads = "structured" | "text" | "both" | "raw" | "raw-text-twice";

export interface KnownClient {
  /** The client as people call it (the server's hold line and docs/mcp.md use it). */
  client: string;
  /** Case-insensitive prefixes of its `clientInfo.name`. */
  prefixes: readonly string[];
  /** The hold that ends before the client's own limit on one call (docs/mcp.md has each limit and its source). */
  holdMs: number;
  /** What its model is handed of a result without and with `isError`. Unknown: absent. */
  reads?: { ok: ModelReads; error: ModelReads };
  /** It lets a server push an event into its session (`notifications/claude/channel`). */
  channel?: true;
  /**
   * Its own schema check refuses an argument a closed schema does not list without naming it (`params must NOT
   * have additional properties`): it is listed the tools' input schemas open, so the server refuses it by name.
   */
  unnamedRefusals?: true;
}

/** Clients in the order their prefixes are tried (docs/mcp.md "What each client's model receives"). */
export const KNOWN_CLIENTS: readonly KnownClient[] = [
  // Moves a call still open after 120 s to a background task; on isError its model gets the text blocks.
  {
    client: "Claude Code",
    prefixes: ["claude-code"],
    holdMs: 110_000,
    reads: { ok: "structured", error: "text" },
    channel: true,
  },
  // Cuts a call at 300 s by default (measured, progress does not extend it); reads structuredContent always.
  {
    client: "Codex CLI",
    prefixes: ["codex"],
    holdMs: 290_000,
    reads: { ok: "structured", error: "structured" },
  },
  // 600 000 ms per server by default; on isError its model gets the raw result as JSON.
  {
    client: "Gemini CLI",
    prefixes: ["gemini-cli"],
    holdMs: 540_000,
    reads: { ok: "text", error: "raw" },
    unnamedRefusals: true,
  },
  // A Gemini CLI fork: 600 000 ms per server, a 300 s idle limit that progress resets; its model gets
  // structuredContent as JSON and then the text (both), and on isError the raw result with the text twice.
  {
    client: "Qwen Code",
    prefixes: ["qwen-cli", "qwen-code"],
    holdMs: 540_000,
    reads: { ok: "both", error: "raw-text-twice" },
    unnamedRefusals: true,
  },
  // The SDK's 60 s per call, reset by every progress notification, no total limit; text blocks only.
  { client: "opencode", prefixes: ["opencode"], holdMs: 540_000, reads: { ok: "text", error: "text" } },
  // Gives up on a call after about a minute (not verified; what its model reads is not known).
  { client: "Cursor", prefixes: ["cursor"], holdMs: 50_000 },
];

/** The known client a `clientInfo.name` belongs to (prefix, case-insensitive), if any. */
export function knownClient(name: string | undefined): KnownClient | undefined {
  const lower = name?.toLowerCase();
  if (lower === undefined) return undefined;
  return KNOWN_CLIENTS.find((c) => c.prefixes.some((prefix) => lower.startsWith(prefix)));
}

/**
 * Arguments a client adds to every tool call on its own: accepted and ignored, whoever sends them (they steer
 * the client, not the tool), and never advertised in a tool's schema. Any other unknown argument is refused.
 */
export const INJECTED_ARGUMENTS: Readonly<Record<string, string>> = {
  // Gemini CLI adds it to every tool's schema and its prompt asks the model to set it on a dependent call.
  wait_for_previous: "Gemini CLI",
};

/** Tool arguments without the ones a client injected (the same object when there are none). */
export function withoutInjected(args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const keys = Object.keys(args);
  if (!keys.some((key) => Object.hasOwn(INJECTED_ARGUMENTS, key))) return args;
  return Object.fromEntries(Object.entries(args).filter(([key]) => !Object.hasOwn(INJECTED_ARGUMENTS, key)));
}
