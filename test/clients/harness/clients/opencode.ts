// opencode (`opencode run --format json`, OpenAI Chat Completions through its openai-compatible provider):
// wired by `awaitless mcp-config opencode --write` where this build has that target, else by its documented
// config (~/.config/opencode/opencode.json, `mcp.awaitless = {type: "local", command: [...]}`).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../../../helpers/cli.ts";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import { mcpConfigHas, setHold, tapConfig, wireWithMcpConfig } from "../wiring.ts";

const configFile = (home: string) => join(home, ".config", "opencode", "opencode.json");

export const opencode: ClientSpec = {
  id: "opencode",
  label: "opencode",
  setup(dirs, opts) {
    const file = configFile(dirs.home);
    mkdirSync(join(dirs.home, ".config", "opencode"), { recursive: true });
    const provider = {
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: "scripted/scripted-model",
      provider: {
        scripted: {
          npm: "@ai-sdk/openai-compatible",
          name: "Scripted",
          options: { baseURL: `http://127.0.0.1:${PORT}/v1`, apiKey: "sk-scripted" },
          models: { "scripted-model": { name: "Scripted model", tool_call: true } },
        },
      },
    };
    writeFileSync(file, JSON.stringify(provider, null, 2));
    if (mcpConfigHas("opencode")) {
      wireWithMcpConfig(dirs, "opencode", file);
      setHold(file, opts.holdSeconds);
    } else {
      const hold = opts.holdSeconds === undefined ? [] : ["--hold-seconds", String(opts.holdSeconds)];
      const server = { type: "local", command: [BINARY, "mcp", ...hold], enabled: true };
      writeFileSync(file, JSON.stringify({ ...provider, mcp: { awaitless: server } }, null, 2));
      tapConfig(dirs, file);
    }
    const config = JSON.parse(readFileSync(file, "utf8"));
    // opencode's per-server `timeout` (ms); 0 leaves the key out: its own default.
    if (opts.clientTimeoutSeconds === 0) delete config.mcp.awaitless.timeout;
    else if (opts.clientTimeoutSeconds !== undefined)
      config.mcp.awaitless.timeout = opts.clientTimeoutSeconds * 1000;
    writeFileSync(file, JSON.stringify(config, null, 2));
  },
  launch(dirs, opts) {
    return {
      portFiles: [configFile(dirs.home)],
      argv: [join(CLIENT_BIN, "opencode"), "run", "--format", "json", opts.prompt],
      env: {
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      },
    };
  },
};
