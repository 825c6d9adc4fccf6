// The agent-economy bench's client profiles (name, hold, limit, progress, Tasks generation), its jobs, and the
// time-scaled server settings that keep every duration/hold ratio the real one.
import { WIRED_HOLDS } from "../src/cli/mcp-config.ts";
import { CLIENT_HOLD_PROFILES, DEFAULT_MCP_CONFIG } from "../src/mcp/config.ts";

export interface Profile {
  label: string;
  clientName: string;
  era: "legacy" | "modern";
  /** The hold the server should pick for this client, in real seconds. */
  holdSeconds: number;
  /** The client's own limit on one call in real seconds (the scripted call is cut there); null = none known. */
  limitSeconds: number | null;
  /** Whether the scripted agent sends a progressToken on its held calls. */
  progress: boolean;
  tasks: "none" | "2025-11-25" | "2026-07-28";
  /** The `awaitless mcp` arguments at this time scale. */
  serverArgs: (scale: number) => string[];
  /** What the server's hold line must name as the source of its choice. */
  holdSource: string;
}

/** The naive poller: starts the job in the background and checks its status every N seconds, as agents do. */
export const POLL_EVERY_SECONDS = 30;

const DEFAULT_HOLD_S = DEFAULT_MCP_CONFIG.holdBudgetMs / 1000;
const builtIn = (prefix: string) => {
  const found = CLIENT_HOLD_PROFILES.find((p) => p.prefix === prefix);
  if (!found) throw new Error(`no built-in hold profile "${prefix}" in src/mcp/config.ts`);
  return found.holdMs / 1000;
};
const byClient = (prefix: string) => `hold_budget_by_client_seconds "${prefix}"`;
const plain = () => ["mcp"];
const codexWired = WIRED_HOLDS.codex;

export const PROFILES: Profile[] = [
  {
    label: "Claude Code",
    clientName: "claude-code",
    era: "legacy",
    holdSeconds: builtIn("claude-code"),
    limitSeconds: 120, // moved to a background task after 120 s
    progress: true,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("claude-code"),
  },
  {
    label: "Codex CLI (default)",
    clientName: "codex-mcp-client",
    era: "legacy",
    holdSeconds: builtIn("codex"),
    limitSeconds: 300, // measured: Codex 0.169 cuts a call at 300 s, progress or not
    progress: false,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("codex"),
  },
  {
    label: "Codex CLI (mcp-config --write)",
    clientName: "codex-mcp-client",
    era: "legacy",
    holdSeconds: codexWired.holdSeconds!,
    limitSeconds: codexWired.clientTimeoutSeconds!,
    progress: false,
    tasks: "none",
    serverArgs: (scale) => ["mcp", "--hold-seconds", String(codexWired.holdSeconds! / scale)],
    holdSource: "--hold-seconds of this server",
  },
  {
    label: "Gemini CLI",
    clientName: "gemini-cli-mcp-client",
    era: "legacy",
    holdSeconds: builtIn("gemini-cli"),
    limitSeconds: 600,
    progress: false,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("gemini-cli"),
  },
  {
    label: "opencode",
    clientName: "opencode",
    era: "legacy",
    holdSeconds: builtIn("opencode"),
    limitSeconds: null, // the SDK's 60 s, reset by every progress notification (sent every 5 s)
    progress: true,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("opencode"),
  },
  {
    label: "Qwen Code",
    clientName: "qwen-cli-mcp-client-awaitless",
    era: "legacy",
    holdSeconds: builtIn("qwen-cli"),
    limitSeconds: 600,
    progress: true,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("qwen-cli"),
  },
  {
    label: "Cursor",
    clientName: "cursor-vscode",
    era: "legacy",
    holdSeconds: builtIn("cursor"),
    limitSeconds: 60,
    progress: false,
    tasks: "none",
    serverArgs: plain,
    holdSource: byClient("cursor"),
  },
  {
    label: "VS Code (2025-11-25 Tasks)",
    clientName: "Visual Studio Code",
    era: "legacy",
    holdSeconds: DEFAULT_HOLD_S,
    limitSeconds: null,
    progress: false,
    tasks: "2025-11-25",
    serverArgs: plain,
    holdSource: byClient("Visual Studio Code"),
  },
  {
    label: "2026-07-28 Tasks client",
    clientName: "tasks-2026-client",
    era: "modern",
    holdSeconds: DEFAULT_HOLD_S,
    limitSeconds: null,
    progress: false,
    tasks: "2026-07-28",
    serverArgs: plain,
    holdSource: byClient("tasks-2026-client"),
  },
];

export const NAIVE: Profile = {
  label: `naive poller (status every ${POLL_EVERY_SECONDS}s)`,
  clientName: "naive-poller",
  era: "legacy",
  holdSeconds: DEFAULT_HOLD_S,
  limitSeconds: 60,
  progress: false,
  tasks: "none",
  serverArgs: plain,
  holdSource: byClient("naive-poller"),
};

export const JOBS = [
  { label: "4-minute job", seconds: 240 },
  { label: "20-minute job", seconds: 1200 },
];

/** Real seconds → seconds on this run's clock. */
export const scaled = (seconds: number, scale: number) => seconds / scale;

/** The settings every server of the run gets: every hold, window and interval divided by the scale. */
export function scaledServerSetup(
  scale: number,
  profiles: Profile[],
): { env: Record<string, string>; config: string } {
  const holds = new Map<string, number>();
  for (const p of CLIENT_HOLD_PROFILES) holds.set(p.prefix, p.holdMs / 1000);
  for (const p of profiles) if (!holds.has(p.clientName)) holds.set(p.clientName, p.holdSeconds);
  holds.set(NAIVE.clientName, NAIVE.holdSeconds);
  const entries = [...holds].map(([name, s]) => `${JSON.stringify(name)} = ${scaled(s, scale)}`);
  return {
    config: `[defaults]\nhold_budget_by_client_seconds = { ${entries.join(", ")} }\n`,
    env: {
      AWAITLESS_MCP_INLINE_WINDOW_MS: String(Math.round(DEFAULT_MCP_CONFIG.inlineWindowMs / scale)),
      AWAITLESS_MCP_PROGRESS_INTERVAL_MS: String(Math.round(DEFAULT_MCP_CONFIG.progressIntervalMs / scale)),
      AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: String(Math.round(DEFAULT_MCP_CONFIG.taskPollIntervalMs / scale)),
    },
  };
}
