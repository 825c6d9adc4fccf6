// Registry and plugin metadata: server.json (MCP Registry rules), the Codex plugin manifest with its
// bundled skill and server entry, and the release workflow — parsed and checked against the project.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join, normalize } from "node:path";
import * as v from "valibot";
import { mainManifest, NPM_PLATFORMS, platformManifest, projectMeta, SCOPE } from "../../build/npm.ts";
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

describe("npm packages (build/npm.ts)", () => {
  const meta = projectMeta();
  const main = mainManifest(meta) as Record<string, unknown> & {
    optionalDependencies: Record<string, string>;
  };

  test("one platform package per OS, CPU and C library that build/release.ts builds, holding a build for it", () => {
    const key = (os: string, cpu: string, libc?: string) => `${os}-${cpu}${libc === "musl" ? "-musl" : ""}`;
    const wanted = [...new Set(TARGETS.map((t) => key(t.os, t.arch, t.libc)))].sort();
    expect(NPM_PLATFORMS.map((p) => key(p.os, p.cpu, p.libc)).sort()).toEqual(wanted);
    for (const p of NPM_PLATFORMS) {
      expect(p.name).toBe(key(p.os, p.cpu, p.libc));
      expect([p.target.os, p.target.arch, p.target.libc]).toEqual([p.os, p.cpu, p.libc]);
    }
  });

  test("awaitless: the launcher under three names, every platform an exact optional dependency, no scripts", () => {
    expect(main.name).toBe("awaitless");
    expect(main.version).toBe(VERSION);
    expect(main.scripts).toBeUndefined();
    expect(main.dependencies).toBeUndefined();
    expect(main.optionalDependencies).toEqual(
      Object.fromEntries(NPM_PLATFORMS.map((p) => [`${SCOPE}/${p.name}`, VERSION])),
    );
    expect(Object.values(main.bin as Record<string, string>)).toEqual(Array(3).fill("bin/awaitless"));
    expect(main.os).toEqual(["linux", "darwin"]);
    expect(main.cpu).toEqual(["x64", "arm64"]);
  });

  test("each platform package says where it runs (os, cpu, libc) and has no command of its own", () => {
    for (const p of NPM_PLATFORMS) {
      const m = platformManifest(p, meta);
      expect(m.name).toBe(`${SCOPE}/${p.name}`);
      expect({ os: m.os, cpu: m.cpu, libc: m.libc }).toEqual({
        os: [p.os],
        cpu: [p.cpu],
        libc: p.libc ? [p.libc] : undefined,
      });
      expect(m.bin).toBeUndefined();
      expect(m.scripts).toBeUndefined();
    }
  });

  test("the MCP Registry entry names the npm package, which names the server back (mcpName)", () => {
    const server = json("server.json");
    expect(main.mcpName).toBe(server.name);
    expect(server.packages).toEqual([
      {
        registryType: "npm",
        identifier: main.name,
        version: VERSION,
        runtimeHint: "npx",
        transport: { type: "stdio" },
        packageArguments: [{ type: "positional", value: "mcp" }],
      },
    ]);
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

  test("then packs the npm packages from the same binaries and publishes the platforms before awaitless", () => {
    const release = steps.findIndex((s) => /gh release create/.test(s.run ?? ""));
    const pack = steps.findIndex((s) => /bun build\/npm\.ts --from=dist .*--pack/.test(s.run ?? ""));
    const publish = steps.findIndex((s) => /npm publish/.test(s.run ?? ""));
    expect(pack).toBeGreaterThan(release);
    expect(publish).toBeGreaterThan(pack);
    const script = steps[publish]!.run!;
    expect(script.indexOf("awaitless-*-")).toBeLessThan(script.indexOf('"dist/npm/awaitless-$version.tgz"'));
  });
});
