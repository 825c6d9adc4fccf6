import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configPath, DEFAULTS, dataDir, loadConfig } from "../../src/config/config.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "awl-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function errorOf(f: () => unknown): AwaitlessError {
  try {
    f();
  } catch (e) {
    if (e instanceof AwaitlessError) return e;
    throw e;
  }
  throw new Error("expected an error");
}

describe("paths", () => {
  test("AWAITLESS_* wins, then --config, then XDG, then HOME", () => {
    expect(configPath({ AWAITLESS_CONFIG: "/a.toml", HOME: "/h" }, "/b.toml").path).toBe("/a.toml");
    expect(configPath({ HOME: "/h" }, "/b.toml")).toEqual({ path: "/b.toml", explicit: true });
    expect(configPath({ XDG_CONFIG_HOME: "/x", HOME: "/h" }).path).toBe("/x/awaitless/config.toml");
    expect(configPath({ HOME: "/h" })).toEqual({ path: "/h/.config/awaitless/config.toml", explicit: false });
    expect(dataDir({ AWAITLESS_DATA_DIR: "/d", XDG_DATA_HOME: "/x" })).toBe("/d");
    expect(dataDir({ XDG_DATA_HOME: "/x" })).toBe("/x/awaitless");
    expect(dataDir({ HOME: "/h" })).toBe("/h/.local/share/awaitless");
  });
});

describe("loading", () => {
  test("no file at the default place means all defaults", () => {
    const c = loadConfig({ HOME: join(dir, "nohome") });
    expect(c.path).toBeNull();
    expect(c.defaults).toEqual(DEFAULTS);
  });

  test("a missing explicit file is an error naming it", () => {
    const e = errorOf(() => loadConfig({ AWAITLESS_CONFIG: join(dir, "missing.toml") }));
    expect(e.code).toBe("config_invalid");
    expect(e.message).toContain("missing.toml");
  });

  test("values override defaults; tables of hosts and per-client budgets are read", () => {
    const p = write(
      "ok.toml",
      `[defaults]\ninline_timeout_seconds = 3\nhold_budget_by_client_seconds = { "claude-code" = 290 }\n[hosts.gpu]\nhostname = "10.0.0.5"\nport = 2222\n[hosts.gpu.slurm]\npartition = "a100"\n`,
    );
    const c = loadConfig({ AWAITLESS_CONFIG: p });
    expect(c.defaults.inline_timeout_seconds).toBe(3);
    expect(c.defaults.max_return_bytes).toBe(DEFAULTS.max_return_bytes);
    expect(c.defaults.hold_budget_by_client_seconds).toEqual({ "claude-code": 290 });
    expect(c.hosts.gpu?.port).toBe(2222);
    expect(c.hosts.gpu?.slurm).toEqual({ partition: "a100" });
  });

  test("a wrong type names the file, the key and what was expected", () => {
    const p = write("type.toml", `[defaults]\nmax_return_bytes = "lots"\n`);
    const e = errorOf(() => loadConfig({ AWAITLESS_CONFIG: p }));
    expect(e.message).toContain(p);
    expect(e.message).toContain('[defaults] max_return_bytes = "lots" is not valid: it must be a number');
    expect(e.hint).toContain("max_return_bytes = ");
  });

  test("an unknown key is refused with the known ones listed", () => {
    const p = write("unknown.toml", `[defaults]\ninline_timeout = 3\n`);
    const e = errorOf(() => loadConfig({ AWAITLESS_CONFIG: p }));
    expect(e.message).toContain("inline_timeout");
    expect(e.hint).toContain("inline_timeout_seconds");
  });

  test("broken TOML is reported as such", () => {
    const p = write("broken.toml", "[defaults\n");
    expect(errorOf(() => loadConfig({ AWAITLESS_CONFIG: p })).message).toContain("not valid TOML");
  });
});
