// mcp-config: JSON and Codex TOML merges on sample config files, backups, and the hold each wired client gets
// (through the compiled binary: test/local/mcp-config.test.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  configPath,
  mergeJson,
  renderConfig,
  serverEntry,
  WIRED_HOLDS,
  writeConfig,
} from "../../src/cli/mcp-config.ts";
import { type CodexKeys, mergeCodexToml } from "../../src/cli/mcp-config-toml.ts";

const scratch = mkdtempSync(join(tmpdir(), "awl-mcpcfg-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const BIN = "/opt/tools/awaitless";
// biome-ignore lint/suspicious/noExplicitAny: parsed TOML, read in assertions only
type Toml = Record<string, any>;
const KEYS: CodexKeys = { args: ["mcp", "--hold-seconds", "540"], toolTimeoutSec: 600, required: true };

const CLAUDE_SAMPLE = `{
    "numStartups": 12,
    "projects": { "/home/u/p": { "allowedTools": [] } },
    "mcpServers": {
        "github": { "type": "stdio", "command": "gh-mcp", "args": [] },
        "awaitless": { "command": "awaitless", "args": ["mcp"], "env": { "AWAITLESS_DATA_DIR": "/data" } }
    }
}
`;

const CODEX_SAMPLE = `# my codex config
model = "gpt-5"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[mcp_servers.awaitless]   # added by hand
command = "awaitless"
args = [
  "mcp",
  "--old",
]
tool_timeout_sec = 120
required = false

[mcp_servers.awaitless.env]
AWAITLESS_DATA_DIR = "/data"

[profiles.fast]
model = "gpt-5-mini"
`;

describe("JSON clients", () => {
  test("merge keeps other keys, other servers, the user's env on our entry, and the file's indent", () => {
    const r = mergeJson(CLAUDE_SAMPLE, serverEntry("claude", BIN), "~/.claude.json");
    expect(r.changed).toBe(true);
    const doc = JSON.parse(r.text);
    expect(doc.numStartups).toBe(12);
    expect(doc.projects).toEqual({ "/home/u/p": { allowedTools: [] } });
    expect(doc.mcpServers.github).toEqual({ type: "stdio", command: "gh-mcp", args: [] });
    expect(doc.mcpServers.awaitless).toEqual({
      command: BIN,
      args: ["mcp", "--hold-seconds", "110"],
      env: { AWAITLESS_DATA_DIR: "/data" },
    });
    expect(r.text).toContain('\n    "numStartups"');
    expect(mergeJson(r.text, serverEntry("claude", BIN), "f").changed).toBe(false);
  });

  test("a new or empty file gets just the entry; Gemini's carries its timeout and the hold under it", () => {
    const r = mergeJson(undefined, serverEntry("gemini", BIN), "settings.json");
    expect(JSON.parse(r.text)).toEqual({
      mcpServers: { awaitless: { command: BIN, args: ["mcp", "--hold-seconds", "540"], timeout: 600000 } },
    });
    expect(JSON.parse(mergeJson("", serverEntry("cursor", BIN), "f").text).mcpServers.awaitless.command).toBe(
      BIN,
    );
  });

  test("opencode's entry sits under `mcp` as one command array with its timeout; other servers and keys stay", () => {
    const existing = `{\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": { "docs": { "type": "remote", "url": "https://x" },\n    "awaitless": { "type": "local", "command": ["old"], "environment": { "A": "1" } } }\n}\n`;
    const doc = JSON.parse(mergeJson(existing, serverEntry("opencode", BIN), "opencode.json", "mcp").text);
    expect(doc.$schema).toBe("https://opencode.ai/config.json");
    expect(doc.mcp.docs).toEqual({ type: "remote", url: "https://x" });
    expect(doc.mcp.awaitless).toEqual({
      type: "local",
      command: [BIN, "mcp", "--hold-seconds", "540"],
      timeout: 600000,
      environment: { A: "1" },
    });
    expect(doc.mcpServers).toBeUndefined();
    expect(JSON.parse(renderConfig("qwen", "awaitless")).mcpServers.awaitless).toEqual({
      command: "awaitless",
      args: ["mcp", "--hold-seconds", "540"],
      timeout: 600000,
    });
  });

  test("files that are not a JSON object are refused with the file named", () => {
    expect(() => mergeJson("{ // comment\n}", serverEntry("gemini", BIN), "settings.json")).toThrow(
      /settings.json is not plain JSON/,
    );
    expect(() => mergeJson("[]", serverEntry("cursor", BIN), "mcp.json")).toThrow(
      /does not hold a JSON object/,
    );
    expect(() => mergeJson('{"mcpServers": 3}', serverEntry("cursor", BIN), "m.json")).toThrow(
      /not an object/,
    );
  });

  test("the printed snippets match docs/mcp.md's shapes", () => {
    expect(JSON.parse(renderConfig("cursor", "awaitless"))).toEqual({
      mcpServers: { awaitless: { command: "awaitless", args: ["mcp", "--hold-seconds", "50"] } },
    });
    expect(JSON.parse(renderConfig("json", "awaitless")).mcpServers.awaitless.args).toEqual(["mcp"]);
    const docs = readFileSync(join(import.meta.dir, "..", "..", "docs", "mcp.md"), "utf8");
    expect(docs).toContain(
      '"awaitless": { "command": "awaitless", "args": ["mcp", "--hold-seconds", "540"], "timeout": 600000 }',
    );
    expect(docs).toContain(renderConfig("codex", "awaitless").trim());
    expect(configPath("codex", { HOME: "/h", CODEX_HOME: "/c" })).toBe("/c/config.toml");
    expect(configPath("gemini", { HOME: "/h" })).toBe("/h/.gemini/settings.json");
    expect(configPath("qwen", { HOME: "/h" })).toBe("/h/.qwen/settings.json");
    expect(configPath("qwen", { HOME: "/h", QWEN_HOME: "/q" })).toBe("/q/settings.json");
    expect(configPath("opencode", { HOME: "/h" })).toBe("/h/.config/opencode/opencode.json");
    expect(configPath("opencode", { HOME: "/h", XDG_CONFIG_HOME: "/x" })).toBe("/x/opencode/opencode.json");
    // a user's opencode.jsonc (and no opencode.json) is the file to merge into
    mkdirSync(join(scratch, "xdg", "opencode"), { recursive: true });
    writeFileSync(join(scratch, "xdg", "opencode", "opencode.jsonc"), "{}\n");
    expect(configPath("opencode", { XDG_CONFIG_HOME: join(scratch, "xdg") })).toBe(
      join(scratch, "xdg", "opencode", "opencode.jsonc"),
    );
    expect(configPath("json", { HOME: "/h" })).toBeUndefined();
  });
});

describe("Codex TOML", () => {
  test("replaces command/args/tool_timeout_sec/required in place; keeps comments, other keys, subtables and other tables", () => {
    const r = mergeCodexToml(CODEX_SAMPLE, BIN, "config.toml", KEYS);
    expect(r.changed).toBe(true);
    const doc = Bun.TOML.parse(r.text) as Toml;
    expect(doc.mcp_servers.awaitless).toEqual({
      command: BIN,
      args: ["mcp", "--hold-seconds", "540"],
      tool_timeout_sec: 600,
      required: true,
      env: { AWAITLESS_DATA_DIR: "/data" },
    });
    expect(doc.mcp_servers.docs).toEqual({ command: "npx", args: ["-y", "docs-mcp"] });
    expect(doc.profiles.fast.model).toBe("gpt-5-mini");
    expect(r.text).toContain("# my codex config");
    expect(r.text).toContain("[mcp_servers.awaitless]   # added by hand");
    expect(r.text).not.toContain("--old");
    expect(mergeCodexToml(r.text, BIN, "config.toml", KEYS)).toEqual({ text: r.text, changed: false });
  });

  test("appends the table to a file without it, and creates a new file", () => {
    const table = `[mcp_servers.awaitless]\ncommand = "${BIN}"\nargs = ["mcp", "--hold-seconds", "540"]\ntool_timeout_sec = 600\nrequired = true\n`;
    const r = mergeCodexToml('model = "o3"\n', BIN, "c.toml", KEYS);
    expect(r.text).toBe(`model = "o3"\n\n${table}`);
    expect(mergeCodexToml(undefined, BIN, "c.toml", KEYS).text).toBe(table);
  });

  test("paths with quotes and backslashes survive as TOML strings", () => {
    const odd = '/tmp/we"ird\\dir/awaitless';
    const doc = Bun.TOML.parse(mergeCodexToml(undefined, odd, "c.toml", KEYS).text) as Toml;
    expect(doc.mcp_servers.awaitless.command).toBe(odd);
  });

  test("forms it cannot edit safely, and invalid TOML, are refused", () => {
    expect(() => mergeCodexToml('mcp_servers.awaitless = { command = "x" }\n', BIN, "c.toml", KEYS)).toThrow(
      /does not edit/,
    );
    expect(() => mergeCodexToml("model = \n", BIN, "c.toml", KEYS)).toThrow(
      /c.toml as it is is not valid TOML/,
    );
  });
});

describe("writeConfig", () => {
  test("writes a backup of the original, keeps its mode, and follows a symlink", () => {
    const dir = join(scratch, "w1");
    mkdirSync(dir);
    const real = join(dir, "real.json");
    writeFileSync(real, CLAUDE_SAMPLE, { mode: 0o600 });
    const link = join(dir, "claude.json");
    Bun.spawnSync(["ln", "-s", real, link]);
    const r = writeConfig("claude", BIN, link, new Date(2030, 0, 2, 3, 4, 5));
    expect(r.changed).toBe(true);
    expect(r.backup).toBe(`${real}.bak-20300102-030405`);
    expect(readFileSync(r.backup!, "utf8")).toBe(CLAUDE_SAMPLE);
    expect(JSON.parse(readFileSync(link, "utf8")).mcpServers.awaitless.command).toBe(BIN);
    expect(statSync(real).mode & 0o777).toBe(0o600);
    expect(writeConfig("claude", BIN, link).changed).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });
});

describe("each wired client holds under its own limit", () => {
  test("the hold written is below the client timeout written (or the limit it cannot change)", () => {
    const limits: Record<string, number> = {
      claude: 120,
      codex: 600,
      gemini: 600,
      opencode: 600,
      qwen: 600,
      cursor: 60,
    };
    for (const [client, limit] of Object.entries(limits)) {
      const wired = WIRED_HOLDS[client as keyof typeof WIRED_HOLDS];
      expect(wired.holdSeconds!).toBeLessThan(wired.clientTimeoutSeconds ?? limit);
      expect(wired.holdSeconds!).toBeGreaterThanOrEqual((wired.clientTimeoutSeconds ?? limit) * 0.8);
    }
  });
});
