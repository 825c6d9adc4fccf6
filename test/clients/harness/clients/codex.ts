// Codex (`codex exec --json`, OpenAI Responses API through a custom provider): wired by
// `awaitless mcp-config codex --write` (~/.codex/config.toml).
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import { setHold, wireWithMcpConfig } from "../wiring.ts";

const PROVIDER = `model_providers.scripted={name="scripted", base_url="http://127.0.0.1:${PORT}/v1", env_key="SCRIPTED_API_KEY", wire_api="responses"}`;

export const codex: ClientSpec = {
  id: "codex",
  label: "Codex",
  mcpConfig: "codex",
  setup(dirs, opts) {
    const file = join(dirs.home, ".codex", "config.toml");
    wireWithMcpConfig(dirs, "codex", file);
    // mcp-config writes `required = true` (`codex exec` waits for our server to start); measure.ts --startup
    // sets it either way.
    if (opts.required !== undefined) {
      const text = readFileSync(file, "utf8").replace(/^required = .*\n?/m, "");
      writeFileSync(file, text.replace(/^(tool_timeout_sec = .*)$/m, `$1\nrequired = ${opts.required}`));
    }
    setHold(file, opts.holdSeconds);
    if (opts.clientTimeoutSeconds !== undefined) {
      const text = readFileSync(file, "utf8");
      // 0 leaves the key out: Codex's own default.
      const line = opts.clientTimeoutSeconds === 0 ? "" : `tool_timeout_sec = ${opts.clientTimeoutSeconds}`;
      writeFileSync(file, text.replace(/^tool_timeout_sec = .*$/m, line));
    }
    if (opts.modern) appendFileSync(file, "\n[features]\nmcp_2026_07_28 = true\n");
  },
  launch(_dirs, opts) {
    return {
      argv: [
        join(CLIENT_BIN, "codex"),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "-c",
        "model_provider=scripted",
        "-c",
        PROVIDER,
        "-c",
        'model="gpt-5.2-codex"',
        "-c",
        "check_for_update_on_startup=false",
        "-c",
        "analytics.enabled=false",
        opts.prompt,
      ],
      env: { SCRIPTED_API_KEY: "sk-scripted", CODEX_HOME: join(_dirs.home, ".codex") },
    };
  },
};
