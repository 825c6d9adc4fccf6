// Gemini CLI (`gemini -p … -o stream-json`, Gemini API): wired by `awaitless mcp-config gemini --write`
// (~/.gemini/settings.json); the workspace's .gemini/settings.json selects API-key auth, which is what makes
// it use GOOGLE_GEMINI_BASE_URL.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_BIN, type ClientSpec, PORT } from "../run-client.ts";
import type { Reply, Turn } from "../types.ts";
import { setHold, wireWithMcpConfig } from "../wiring.ts";

export const gemini: ClientSpec = {
  id: "gemini",
  label: "Gemini CLI",
  mcpConfig: "gemini",
  setup(dirs, opts) {
    const user = join(dirs.home, ".gemini", "settings.json");
    wireWithMcpConfig(dirs, "gemini", user);
    setHold(user, opts.holdSeconds);
    const settings = JSON.parse(readFileSync(user, "utf8"));
    // 0 leaves the key out: Gemini CLI's own default.
    if (opts.clientTimeoutSeconds === 0) delete settings.mcpServers.awaitless.timeout;
    else if (opts.clientTimeoutSeconds !== undefined)
      settings.mcpServers.awaitless.timeout = opts.clientTimeoutSeconds * 1000;
    settings.privacy = { usageStatisticsEnabled: false };
    settings.telemetry = { enabled: false };
    settings.general = { disableAutoUpdate: true, disableUpdateNag: true };
    writeFileSync(user, JSON.stringify(settings, null, 2));
    // The user trusts the work folder (what answering the trust prompt writes); untrusted, its settings are ignored.
    writeFileSync(
      join(dirs.home, ".gemini", "trustedFolders.json"),
      JSON.stringify({ [dirs.work]: "TRUST_FOLDER" }),
    );
    mkdirSync(join(dirs.work, ".gemini"), { recursive: true });
    writeFileSync(
      join(dirs.work, ".gemini", "settings.json"),
      JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2),
    );
  },
  launch(_dirs, opts) {
    return {
      argv: [join(CLIENT_BIN, "gemini"), "-p", opts.prompt, "-o", "stream-json", "--approval-mode", "yolo"],
      env: { GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${PORT}`, GEMINI_API_KEY: "scripted-key" },
    };
  },
  side: geminiSide,
};

/**
 * Side requests ask for JSON (the model router's complexity score, the next-speaker check): an object filled
 * from the requested schema, the turn handed back to the user.
 */
function geminiSide(_turn: Turn, body: Record<string, unknown>): Reply {
  const config = (body.generationConfig ?? {}) as Record<string, unknown>;
  if (config.responseMimeType !== "application/json") return { kind: "text", text: "ok" };
  return { kind: "json", value: fromSchema(config.responseJsonSchema ?? config.responseSchema ?? {}) };
}

function fromSchema(schema: unknown, key = ""): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  if (Array.isArray(s.enum)) return key === "next_speaker" ? "user" : s.enum[0];
  switch (String(s.type ?? "object").toLowerCase()) {
    case "string":
      return key === "next_speaker" ? "user" : "scripted";
    case "integer":
    case "number":
      return 10;
    case "boolean":
      return false;
    case "array":
      return [];
    default: {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, k)]));
    }
  }
}
