// Keeps docs/architecture.md true: the dependency direction and one importing place per third-party library.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "..", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
  });
}

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;

/** Runtime imports only: `import type` is erased at build time and loads nothing. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8").replace(/(^|\n)\s*import type [^;]*;/g, "\n");
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2]!);
}

const all = files(SRC).map((p) => ({ file: relative(SRC, p), imports: importsOf(p) }));

describe("architecture", () => {
  test("core imports nothing from cli, mcp, backends, config or wrapper", () => {
    const bad = all
      .filter((f) => f.file.startsWith("core/"))
      .flatMap((f) =>
        f.imports
          .filter((i) => /^\.\.\/(cli|mcp|backends|config|wrapper)\//.test(i))
          .map((i) => `${f.file} → ${i}`),
      );
    expect(bad).toEqual([]);
  });

  test("backends never import the CLI or the MCP server", () => {
    const bad = all
      .filter((f) => /^(backends|wrapper|ssh)\//.test(f.file))
      .flatMap((f) => f.imports.filter((i) => /\/(cli|mcp)\//.test(i)).map((i) => `${f.file} → ${i}`));
    expect(bad).toEqual([]);
  });

  test("the SSH client library (ssh/) knows no backend, job directory or surface", () => {
    const bad = all
      .filter((f) => f.file.startsWith("ssh/"))
      .flatMap((f) =>
        f.imports.filter((i) => /^\.\.\/(backends|wrapper|cli|mcp)\//.test(i)).map((i) => `${f.file} → ${i}`),
      );
    expect(all.some((f) => f.file === "ssh/ssh-session.ts")).toBe(true);
    expect(bad).toEqual([]);
  });

  const OWNERS: [RegExp, RegExp][] = [
    [/^bun:sqlite$/, /^core\/job-store\.ts$/],
    [/^cac$/, /^cli\/cli\.ts$/],
    [/^ssh2$/, /^ssh\/ssh-session\.ts$/],
    [/^@modelcontextprotocol\//, /^mcp\//],
    [/^valibot$/, /^(config|mcp)\//],
    [/^@valibot\/to-json-schema$/, /^mcp\/json-schema\.ts$/],
  ];
  for (const [lib, owner] of OWNERS) {
    test(`${lib.source} is imported only from ${owner.source}`, () => {
      const users = all.filter((f) => f.imports.some((i) => lib.test(i))).map((f) => f.file);
      expect(users.filter((u) => !owner.test(u))).toEqual([]);
    });
  }

  test("plain CLI paths never load the MCP SDK eagerly", () => {
    const eager = (file: string) =>
      [...readFileSync(join(SRC, file), "utf8").matchAll(/(?:^|\n)\s*import[^'"]*?from\s+"([^"]+)"/g)].map(
        (m) => m[1]!,
      );
    const seen = new Set<string>();
    const stack = ["main.ts"];
    while (stack.length) {
      const f = stack.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const i of eager(f)) {
        if (!i.startsWith(".")) continue;
        stack.push(relative(SRC, join(SRC, f, "..", i)));
      }
    }
    expect([...seen].filter((f) => f.startsWith("mcp/") || f === "mcp-entry.ts")).toEqual([]);
  });
});
