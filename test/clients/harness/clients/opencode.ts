// opencode (`opencode run --format json`, OpenAI Chat Completions through an openai-compatible provider):
// `awaitless mcp-config` has no target for it, so its documented config (~/.config/opencode/opencode.json,
// `mcp.awaitless = {type: "local", command: [...]}`) wires it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY } from "../../../helpers/cli.ts";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import { tapConfig } from "../wiring.ts";

export const opencode: ClientSpec = {
  id: "opencode",
  label: "opencode",
  setup(dirs, opts) {
    const dir = join(dirs.home, ".config", "opencode");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "opencode.json");
    const server: Record<string, unknown> = { type: "local", command: [BINARY, "mcp"], enabled: true };
    if (opts.clientTimeoutSeconds !== undefined) server.timeout = opts.clientTimeoutSeconds * 1000;
    const config = {
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
      mcp: { awaitless: server },
    };
    writeFileSync(file, JSON.stringify(config, null, 2));
    tapConfig(dirs, file);
  },
  launch(dirs, opts) {
    return {
      portFiles: [join(dirs.home, ".config", "opencode", "opencode.json")],
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
