// The bundler plugin that defers two MCP SDK modules to their first use (build/sdk-deferred.ts): a bundle built with
// it, as build/build.ts builds, still validates OAuth shapes and JSON Schemas; no chunk imports the deferred modules
// at load; and the plugin refuses an SDK whose files changed instead of quietly losing the saving.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFERRALS, exportList, sdkDeferred } from "../../build/sdk-deferred.ts";

const root = join(import.meta.dir, "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "awl-sdk-deferred-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ENTRY = `import { McpServer, fromJsonSchema, isSpecType, specTypeSchemas } from "@modelcontextprotocol/server";
const tokens = { access_token: "t", token_type: "bearer" };
const metadata = specTypeSchemas.OAuthMetadata["~standard"].validate({ issuer: "x" });
const named = fromJsonSchema({ type: "object", properties: { name: { type: "string" } }, required: ["name"] });
console.log(JSON.stringify({
  server: typeof McpServer,
  tokens: isSpecType.OAuthTokens(tokens),
  notTokens: isSpecType.OAuthTokens({ token_type: "bearer" }),
  metadataIssues: (metadata.issues ?? []).length > 0,
  named: named["~standard"].validate({ name: "a" }),
  unnamed: (named["~standard"].validate({}).issues ?? []).length,
}));
`;

/** Bundles `entry` (in the repository, so it resolves the SDK) as build/build.ts does, short of compiling. */
async function bundle(name: string, entry: string, plugin = sdkDeferred()) {
  const file = join(root, `.sdk-deferred-${name}-${process.pid}.ts`);
  writeFileSync(file, entry);
  const outdir = join(tmp, name);
  try {
    const result = await Bun.build({
      entrypoints: [file],
      outdir,
      target: "bun",
      format: "esm",
      splitting: true,
      plugins: [plugin.plugin],
    });
    expect(result.success).toBe(true);
  } finally {
    rmSync(file, { force: true });
  }
  return { outdir, plugin };
}

describe("build/sdk-deferred.ts", () => {
  test("a bundle with both modules deferred validates OAuth shapes and JSON Schemas as the SDK does", async () => {
    const { outdir, plugin } = await bundle("uses", ENTRY);
    plugin.check();
    const entry = readdirSync(outdir).find((f) => f.startsWith(".sdk-deferred-uses"))!;
    const run = Bun.spawnSync([process.execPath, join(outdir, entry)], { stdout: "pipe", stderr: "pipe" });
    expect(run.stderr.toString()).toBe("");
    expect(JSON.parse(run.stdout.toString())).toEqual({
      server: "function",
      tokens: true,
      notTokens: false,
      metadataIssues: true,
      named: { value: { name: "a" } },
      unnamed: 1,
    });
  });

  test("no chunk imports the OAuth schemas or ajv at load: they are required on first use", async () => {
    const { outdir } = await bundle("load", ENTRY);
    const chunks = readdirSync(outdir).map((f) => ({ f, text: readFileSync(join(outdir, f), "utf8") }));
    // the chunks that define them: the OAuth token response's fields, ajv's 2020-12 engine
    for (const marker of ["refresh_token: string().optional()", "var Ajv2020 = class"]) {
      const home = chunks.filter((c) => c.text.includes(marker));
      expect(home.length).toBe(1);
      const name = home[0]!.f;
      const importers = chunks.filter((c) =>
        new RegExp(`(import|from)\\s*"\\./${name.replace(".", "\\.")}"`).test(c.text),
      );
      expect(importers.map((c) => c.f)).toEqual([]);
      expect(chunks.some((c) => c.text.includes(`require("./${name}")`))).toBe(true);
    }
  });

  test("a build that never reaches the SDK's modules fails the check by name", async () => {
    const { plugin } = await bundle("none", 'console.log("no SDK");\n');
    expect(() => plugin.check()).toThrow(
      "no module matched for the SDK's OAuth schemas, the SDK's default JSON Schema validator (ajv)",
    );
  });

  test("a module whose text is not the pinned SDK's is refused, naming the file", () => {
    const [oauth, shims] = DEFERRALS;
    expect(() => oauth!.rewrite('import { z } from "zod";\nexport { A as a };\n', "auth-x.mjs")).toThrow(
      'auth-x.mjs: expected zod as its only import, found ["import { z } from \\"zod\\";"]',
    );
    expect(() =>
      oauth!.rewrite('import * as z from "zod/v4";\nconst A = 1;\nexport default A;\n', "auth-y.mjs"),
    ).toThrow("auth-y.mjs: expected one `export { … };` statement at its end");
    expect(() =>
      shims!.rewrite("export { A as DefaultJsonSchemaValidator, process };\n", "shimsNode.mjs"),
    ).toThrow("shimsNode.mjs: not the expected two imports and one export of the default validator");
  });

  test("the export list of a bundled module is read with its aliases", () => {
    expect(
      exportList("const A = 1, B = 2;\nexport { A as a, B };\n//# sourceMappingURL=x.mjs.map", "m.mjs"),
    ).toEqual([
      ["A", "a"],
      ["B", "B"],
    ]);
  });
});
