// Bundler plugin: two modules of the MCP SDK that a stdio server never uses are evaluated on first use instead of at
// start (the OAuth schemas, ~270 zod schemas; ajv, the JSON Schema validator). Behaviour is unchanged: both are in
// the binary and load when first touched. Each rewrite expects the pinned SDK's exact text and fails the build if
// it changed (update the rewrite, or drop it, when the SDK is updated). See docs/performance.md, "Start-up".
import type { BunPlugin } from "bun";

/** One module rewritten: which file (by path), and how its text becomes the deferring module. */
interface Deferral {
  what: string;
  path: RegExp;
  rewrite(original: string, file: string): string;
}

/** Marks the import of a deferred module's original text (the plugin loads it unchanged). */
const ORIGINAL = "?awaitless-original";

/**
 * `export { A as a, B as b };` (the last statement of a bundled module) → [["A", "a"], ["B", "b"]]; the rest of the
 * text must be ESM import lines, code, comments and a source-map comment.
 */
export function exportList(text: string, file: string): [local: string, exported: string][] {
  const m = /^export \{([^}]*)\};\n(?:\/\/# sourceMappingURL=\S*\n?)?$/m.exec(text);
  if (!m || text.indexOf("export ", m.index + 1) >= 0 || /^export /m.exec(text)?.index !== m.index)
    throw new Error(`${file}: expected one \`export { … };\` statement at its end`);
  return m[1]!.split(",").map((part) => {
    const words = part.trim().split(/\s+as\s+/);
    const local = words[0]!;
    const exported = words[1] ?? local;
    if (!/^[\w$]+$/.test(local) || !/^[\w$]+$/.test(exported))
      throw new Error(`${file}: cannot read the export ${JSON.stringify(part.trim())}`);
    return [local, exported];
  });
}

/** A module of zod schemas, each export replaced by `z.lazy` of the original (built on the first parse of any). */
function lazySchemas(original: string, file: string): string {
  const imports = original.match(/^import .*$/gm) ?? [];
  if (imports.length !== 1 || imports[0] !== 'import * as z from "zod/v4";')
    throw new Error(`${file}: expected zod as its only import, found ${JSON.stringify(imports)}`);
  const names = exportList(original, file);
  const self = JSON.stringify(file + ORIGINAL);
  return [
    'import * as z from "zod/v4";',
    "let built;",
    `const schema = (name) => z.lazy(() => (built ??= require(${self}))[name]);`,
    ...names.map(([, exported]) => `const ${exported}$deferred = schema(${JSON.stringify(exported)});`),
    `export { ${names.map(([, exported]) => `${exported}$deferred as ${exported}`).join(", ")} };`,
    "",
  ].join("\n");
}

const SHIMS_TEXT =
  /^import \{ n as AjvJsonSchemaValidator \} from "(\.\/ajvProvider-[\w-]+\.mjs)";\nimport process from "node:process";\n\nexport \{ AjvJsonSchemaValidator as DefaultJsonSchemaValidator, process \};\n?$/;

/** The Node shims: the default JSON Schema validator creates the ajv one (its module evaluated) on first use. */
function deferredValidator(original: string, file: string): string {
  const m = SHIMS_TEXT.exec(original);
  if (!m) throw new Error(`${file}: not the expected two imports and one export of the default validator`);
  return [
    'import process from "node:process";',
    "class DefaultJsonSchemaValidator {",
    "  #args;",
    "  #real;",
    "  constructor(...args) {",
    "    this.#args = args;",
    "  }",
    "  getValidator(schema) {",
    `    this.#real ??= new (require(${JSON.stringify(m[1])}).n)(...this.#args);`,
    "    return this.#real.getValidator(schema);",
    "  }",
    "}",
    "export { DefaultJsonSchemaValidator, process };",
    "",
  ].join("\n");
}

export const DEFERRALS: readonly Deferral[] = [
  {
    what: "the SDK's OAuth schemas",
    path: /[\\/]@modelcontextprotocol[\\/]core[\\/]dist[\\/]auth-[\w-]+\.mjs$/,
    rewrite: lazySchemas,
  },
  {
    what: "the SDK's default JSON Schema validator (ajv)",
    path: /[\\/]@modelcontextprotocol[\\/]server[\\/]dist[\\/]shimsNode\.mjs$/,
    rewrite: deferredValidator,
  },
];

/**
 * The plugin, and `check()` to call after the build: throws unless every deferral found its module (an SDK whose
 * files moved would otherwise quietly lose the saving).
 */
export function sdkDeferred(): { plugin: BunPlugin; check(): void } {
  const applied = new Set<Deferral>();
  const plugin: BunPlugin = {
    name: "awaitless-sdk-deferred",
    setup(build) {
      build.onResolve({ filter: /\?awaitless-original$/ }, (args) => ({
        path: args.path,
        namespace: "awaitless-original",
      }));
      build.onLoad({ filter: /.*/, namespace: "awaitless-original" }, async (args) => ({
        contents: await Bun.file(args.path.slice(0, -ORIGINAL.length)).text(),
        loader: "js",
      }));
      for (const d of DEFERRALS) {
        build.onLoad({ filter: d.path }, async (args) => {
          applied.add(d);
          return { contents: d.rewrite(await Bun.file(args.path).text(), args.path), loader: "js" };
        });
      }
    },
  };
  return {
    plugin,
    check() {
      const missed = DEFERRALS.filter((d) => !applied.has(d));
      if (missed.length > 0)
        throw new Error(
          `build/sdk-deferred.ts: no module matched for ${missed.map((d) => d.what).join(", ")} (the MCP SDK's files changed?): update DEFERRALS`,
        );
    },
  };
}
