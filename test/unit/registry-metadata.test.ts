// Registry and plugin metadata: server.json (MCP Registry rules), the Codex plugin manifest with its
// bundled skill and server entry, and the release workflow — parsed and checked against the project.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import * as v from "valibot";
import { TARGETS } from "../../build/release.ts";
import { renderConfig } from "../../src/cli/mcp-config.ts";

const ROOT = join(import.meta.dir, "..", "..");
const json = (p: string) => JSON.parse(readFileSync(join(ROOT, p), "utf8"));
const VERSION: string = json("package.json").version;

// The MCP Registry's server.json rules (schema 2025-12-11 plus the official registry's requirements).
const SemVer = v.pipe(v.string(), v.regex(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/, "an exact version"));
const Https = v.pipe(v.string(), v.url(), v.startsWith("https://"));
const ServerJson = v.strictObject({
  $schema: v.literal("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"),
  name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/), v.maxLength(200)),
  title: v.optional(v.pipe(v.string(), v.maxLength(100))),
  description: v.pipe(v.string(), v.minLength(1), v.maxLength(100)),
  version: SemVer,
  repository: v.optional(
    v.strictObject({ url: Https, source: v.string(), subfolder: v.optional(v.string()) }),
  ),
  websiteUrl: v.optional(Https),
  packages: v.optional(v.array(v.record(v.string(), v.unknown()))),
  _meta: v.optional(
    v.strictObject({
      "io.modelcontextprotocol.registry/publisher-provided": v.record(v.string(), v.unknown()),
    }),
  ),
});

describe("server.json", () => {
  const doc = json("server.json");
  test("is valid for the MCP Registry", () => {
    const r = v.safeParse(ServerJson, doc);
    expect(r.success ? [] : r.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`)).toEqual([]);
    // Reverse-DNS namespace: io.github.<owner>/<name>
    expect(doc.name).toMatch(/^io\.github\.[a-z0-9-]+\/awaitless$/);
    expect(JSON.stringify(doc._meta).length).toBeLessThan(4096);
  });

  test("matches the package version, the release workflow's owner and the server entry", () => {
    expect(doc.version).toBe(VERSION);
    const owner = doc.name.split("/")[0].replace("io.github.", "");
    expect(doc.repository.url).toBe(`https://github.com/${owner}/awaitless`);
    expect(readFileSync(join(ROOT, "install.sh"), "utf8")).toContain(`${doc.repository.url}/releases`);
    const meta = doc._meta["io.modelcontextprotocol.registry/publisher-provided"];
    expect({ command: meta.command, args: meta.args }).toEqual({ command: "awaitless", args: ["mcp"] });
  });
});

describe("Codex plugin (.codex-plugin/plugin.json)", () => {
  const manifest = json(".codex-plugin/plugin.json");
  const Manifest = v.object({
    name: v.pipe(v.string(), v.regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "kebab-case")),
    version: SemVer,
    description: v.pipe(v.string(), v.minLength(1)),
    skills: v.pipe(v.string(), v.startsWith("./")),
    mcpServers: v.pipe(v.string(), v.startsWith("./")),
    interface: v.object({
      displayName: v.string(),
      shortDescription: v.string(),
      capabilities: v.array(v.string()),
      defaultPrompt: v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.maxLength(3)),
    }),
  });

  test("has the fields Codex reads; paths stay inside the plugin root", () => {
    const r = v.safeParse(Manifest, manifest);
    expect(r.success ? [] : r.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`)).toEqual([]);
    expect(manifest.version).toBe(VERSION);
    for (const p of [manifest.skills, manifest.mcpServers]) {
      expect(normalize(p).startsWith("..")).toBe(false);
      expect(existsSync(join(ROOT, p))).toBe(true);
    }
    expect(readdirNames(join(ROOT, ".codex-plugin"))).toEqual(["plugin.json"]);
  });

  test("bundles the skill and the same server entry mcp-config prints", () => {
    expect(existsSync(join(ROOT, manifest.skills, "awaitless", "SKILL.md"))).toBe(true);
    expect(json(manifest.mcpServers.slice(2))).toEqual(JSON.parse(renderConfig("json", "awaitless")));
  });
});

function readdirNames(dir: string): string[] {
  return [...new Bun.Glob("*").scanSync({ cwd: dir, dot: true })].sort();
}

describe(".github/workflows/release.yml", () => {
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML, read in assertions only
  const wf = Bun.YAML.parse(readFileSync(join(ROOT, ".github/workflows/release.yml"), "utf8")) as any;
  const steps: { name?: string; run?: string; uses?: string }[] = wf.jobs.release.steps;
  const runs = steps.map((s) => s.run ?? "").join("\n");

  test("runs on version tags with permission to publish", () => {
    expect(wf.on.push.tags).toEqual(["v*"]);
    expect(wf.permissions.contents).toBe("write");
    expect(steps[0]!.uses).toMatch(/^actions\/checkout@/);
  });

  test("builds every target with release.ts, verifies SHA256SUMS, then uploads binaries, sums and install.sh", () => {
    const build = steps.findIndex((s) => /bun build\/release\.ts/.test(s.run ?? ""));
    const verify = steps.findIndex((s) => /sha256sum -c SHA256SUMS/.test(s.run ?? ""));
    const publish = steps.findIndex((s) => /gh release create/.test(s.run ?? ""));
    expect(build).toBeGreaterThan(0);
    expect(verify).toBeGreaterThan(build);
    expect(publish).toBeGreaterThan(verify);
    for (const asset of ["dist/awaitless-*", "dist/SHA256SUMS", "install.sh"])
      expect(steps[publish]!.run).toContain(asset);
    expect(runs).toContain("npm ci");
    expect(runs).toMatch(/GITHUB_REF_NAME.*package\.json|package\.json[\s\S]*GITHUB_REF_NAME/);
    expect(runs).not.toMatch(/--only=/); // all of TARGETS, not a subset
    expect(TARGETS.length).toBeGreaterThanOrEqual(7);
  });
});
