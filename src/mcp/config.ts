// MCP server settings: inline window, hold budget, progress cadence, task TTL/poll interval, output bounds.
import { AwaitlessError } from "../core/model/errors.ts";
import { KNOWN_CLIENTS, knownClient } from "./clients.ts";

export interface McpConfig {
  /** How long `run` holds the call before detaching (ms). Default 10 000. */
  inlineWindowMs: number;
  /** Longest a held call (wait_for_job, wait_for_completions, blocking run_job) stays open (ms). Default 50 000. */
  holdBudgetMs: number;
  /**
   * Per-client hold budgets (ms), keyed by the client's `clientInfo.name` (case-insensitive prefix match).
   * A client known to hold calls for long gets a longer budget; everyone else gets `holdBudgetMs`.
   */
  holdBudgetByClientMs: Record<string, number>;
  /** The hold this server process was started with (`awaitless mcp --hold-seconds N`): wins over every other. */
  holdBudgetPinnedMs: number | null;
  /** Interval between `notifications/progress` on held calls (ms). Clamped to at most 10 000. Default 5 000. */
  progressIntervalMs: number;
  /** How long a finished task stays visible to `tasks/get` after the job ended (ms); null = forever. Default 24 h. */
  taskTtlMs: number | null;
  /** Suggested `tasks/get` polling interval (ms). Default 2 000. */
  taskPollIntervalMs: number;
  /** Upper bound on log bytes one tool result returns (get_job_logs `max_bytes` default and cap). Default 16 384. */
  maxReturnBytes: number;
  /** Name and version reported as serverInfo. */
  serverName: string;
  serverVersion: string;
}

/** No client cancels a call for silence when progress arrives at least this often (docs/mcp.md, "Hold budgets per client"). */
export const MAX_PROGRESS_INTERVAL_MS = 10_000;

export const DEFAULT_MCP_CONFIG: McpConfig = {
  inlineWindowMs: 10_000,
  holdBudgetMs: 50_000,
  holdBudgetByClientMs: {},
  holdBudgetPinnedMs: null,
  progressIntervalMs: 5_000,
  taskTtlMs: 86_400_000,
  taskPollIntervalMs: 2_000,
  maxReturnBytes: 16_384,
  serverName: "awaitless",
  serverVersion: "0.1.0",
};

/** Defaults, then `overrides`, with intervals clamped to what the protocol promises. */
export function resolveMcpConfig(overrides: Partial<McpConfig> = {}): McpConfig {
  const merged: McpConfig = { ...DEFAULT_MCP_CONFIG };
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  merged.progressIntervalMs = clamp(merged.progressIntervalMs, 100, MAX_PROGRESS_INTERVAL_MS);
  merged.holdBudgetMs = Math.max(1_000, merged.holdBudgetMs);
  if (merged.holdBudgetPinnedMs !== null)
    merged.holdBudgetPinnedMs = Math.max(1_000, merged.holdBudgetPinnedMs);
  merged.inlineWindowMs = Math.max(0, merged.inlineWindowMs);
  merged.taskPollIntervalMs = Math.max(50, merged.taskPollIntervalMs);
  merged.maxReturnBytes = Math.max(256, merged.maxReturnBytes);
  return merged;
}

const ENV_KEYS: Record<string, keyof McpConfig> = {
  AWAITLESS_MCP_INLINE_WINDOW_MS: "inlineWindowMs",
  AWAITLESS_MCP_HOLD_BUDGET_MS: "holdBudgetMs",
  AWAITLESS_MCP_PROGRESS_INTERVAL_MS: "progressIntervalMs",
  AWAITLESS_MCP_TASK_TTL_MS: "taskTtlMs",
  AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "taskPollIntervalMs",
  AWAITLESS_MCP_MAX_RETURN_BYTES: "maxReturnBytes",
};

/** Environment overrides (`AWAITLESS_MCP_*`, integers in ms/bytes) win over the config file. */
export function applyMcpEnv(config: McpConfig, env: Record<string, string | undefined>): McpConfig {
  const overrides: Partial<McpConfig> = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
      const unit = key === "maxReturnBytes" ? "bytes" : "milliseconds";
      throw new AwaitlessError(
        "config_invalid",
        `the environment variable ${name}=${JSON.stringify(raw)} is not a whole number of ${unit}`,
        `set ${name} to a whole number of ${unit} (e.g. ${name}=${unit === "bytes" ? "16384" : "30000"}) ` +
          "in the environment the MCP server is started with, or unset it for the config file's value",
        { variable: name, value: raw },
      );
    }
    (overrides as Record<string, number>)[key] = value;
  }
  return resolveMcpConfig({ ...config, ...overrides });
}

/** Each known client's hold by one `clientInfo.name` prefix (src/mcp/clients.ts). A user's `holdBudgetByClientMs` wins. */
export const CLIENT_HOLD_PROFILES: readonly { prefix: string; client: string; holdMs: number }[] =
  KNOWN_CLIENTS.flatMap((c) => c.prefixes.map((prefix) => ({ prefix, client: c.client, holdMs: c.holdMs })));

export interface HoldChoice {
  budgetMs: number;
  /** Where the budget came from, as the server's log line says it. */
  source: string;
}

/** The hold budget for a client, by its self-reported name, and why. */
export function holdChoiceFor(config: McpConfig, clientName: string | undefined): HoldChoice {
  if (config.holdBudgetPinnedMs !== null)
    return { budgetMs: config.holdBudgetPinnedMs, source: "--hold-seconds of this server" };
  const lower = clientName?.toLowerCase();
  if (lower !== undefined) {
    for (const [prefix, budgetMs] of Object.entries(config.holdBudgetByClientMs)) {
      if (lower.startsWith(prefix.toLowerCase()))
        return { budgetMs, source: `hold_budget_by_client_seconds "${prefix}"` };
    }
    const known = knownClient(clientName);
    if (known) return { budgetMs: known.holdMs, source: `built-in profile for ${known.client}` };
  }
  return { budgetMs: config.holdBudgetMs, source: "hold_budget_seconds (no client profile matched)" };
}

export function holdBudgetFor(config: McpConfig, clientName: string | undefined): number {
  return holdChoiceFor(config, clientName).budgetMs;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
