// Claude Code (`claude -p`, Anthropic Messages API): wired by `awaitless mcp-config claude --write`
// (~/.claude.json); its MCP tools are deferred behind ToolSearch, so the model searches first.
import { join } from "node:path";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import { call } from "../script.ts";
import { setHold, wireWithMcpConfig } from "../wiring.ts";

/** What a model looking for a way to run a long command would type into the tool search. */
export const CLAUDE_TOOL_QUERY = "run a shell command as a job and wait for it";

/** The scripted model's address, telemetry, update checks and nonessential traffic off. */
export function claudeEnv(): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${PORT}`,
    ANTHROPIC_API_KEY: "sk-ant-scripted",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_TERMINAL_TITLE: "1",
  };
}

export const claude: ClientSpec = {
  id: "claude",
  label: "Claude Code",
  mcpConfig: "claude",
  setup(dirs, opts) {
    const file = join(dirs.home, ".claude.json");
    wireWithMcpConfig(dirs, "claude", file);
    setHold(file, opts.holdSeconds);
  },
  launch(_dirs, opts) {
    return {
      argv: [
        join(CLIENT_BIN, "claude"),
        "-p",
        opts.prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--allowedTools",
        "mcp__awaitless",
      ],
      env: {
        ...claudeEnv(),
        ...(opts.modern ? { MCP_PROTOCOL_NEGOTIATION: "auto" } : {}),
        // Claude Code's documented per-call MCP tool timeout (ms).
        ...(opts.clientTimeoutSeconds ? { MCP_TOOL_TIMEOUT: String(opts.clientTimeoutSeconds * 1000) } : {}),
      },
    };
  },
  preamble: [call("ToolSearch", { query: CLAUDE_TOOL_QUERY }, { client: true })],
};
