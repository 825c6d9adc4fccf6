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

/** Static imports, `import()` and `require()` (a backend made on first use is required: context.ts). */
const IMPORT_RE =
  /(?:^|\n)\s*(?:import|export)[^'"]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)|require\(\s*"([^"]+)"\s*\)/g;

/** Runtime imports only: `import type` is erased at build time and loads nothing. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8").replace(/(^|\n)\s*import type [^;]*;/g, "\n");
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** Each src file with its runtime imports as written, and the src files they name (relative to src/). */
const all = files(SRC).map((p) => {
  const imports = importsOf(p);
  const targets = imports.filter((i) => i.startsWith(".")).map((i) => relative(SRC, join(p, "..", i)));
  return { file: relative(SRC, p), imports, targets };
});

/** Every relative import, `import type` included (an erased import still ties the two modules' designs together). */
function allImportsOf(path: string): string[] {
  return [...readFileSync(path, "utf8").matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The import graph of src/: file → the src files it imports (relative imports of .ts files). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const p of files(SRC)) {
    const file = relative(SRC, p);
    const targets = allImportsOf(p)
      .filter((i) => i.startsWith(".") && i.endsWith(".ts"))
      .map((i) => relative(SRC, join(p, "..", i)));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** Each cycle of the graph once, as its path (a → b → … → a), found by depth-first search from every file in order. */
export function cyclesOf(graph: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (f: string) => {
    if (onPath.has(f)) {
      const loop = path.slice(path.indexOf(f));
      // one name per cycle: rotated to start at its smallest file
      const start = loop.indexOf([...loop].sort()[0]!);
      const rotated = [...loop.slice(start), ...loop.slice(0, start)];
      found.add([...rotated, rotated[0]].join(" → "));
      return;
    }
    if (done.has(f)) return;
    path.push(f);
    onPath.add(f);
    for (const t of graph.get(f) ?? []) visit(t);
    onPath.delete(f);
    path.pop();
    done.add(f);
  };
  for (const f of [...graph.keys()].sort()) visit(f);
  return [...found].sort();
}

describe("architecture", () => {
  test("core imports nothing from cli, mcp, backends, config or wrapper", () => {
    const bad = all
      .filter((f) => f.file.startsWith("core/"))
      .flatMap((f) =>
        f.targets
          .filter((t) => /^(cli|mcp|ui|backends|config|wrapper|ssh)\//.test(t))
          .map((t) => `${f.file} → ${t}`),
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

  test("the dashboard (ui/) knows the job service's interface only: no backend, store, wrapper, config or surface", () => {
    const bad = all
      .filter((f) => f.file.startsWith("ui/"))
      .flatMap((f) =>
        f.imports
          .filter(
            (i) => /^\.\.\/(backends|wrapper|config|cli|mcp|ssh)\//.test(i) || /job-store|sqlite/.test(i),
          )
          .map((i) => `${f.file} → ${i}`),
      );
    expect(all.some((f) => f.file === "ui/server.ts")).toBe(true);
    expect(bad).toEqual([]);
  });

  const OWNERS: [RegExp, RegExp][] = [
    [/^bun:sqlite$/, /^core\/store\/sqlite\.ts$/],
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

  test("core words no hint for a surface: no {cli, mcp} pairs, no MCP tool names (src/hints.ts words actions)", () => {
    const tools =
      /\b(wait_for_job|get_job_logs|get_job_status|list_jobs|list_queues|create_queue|cancel_job|submit_job|run_job|wait_for_completions)\b/;
    const bad = files(join(SRC, "core")).flatMap((p) =>
      readFileSync(p, "utf8")
        .split("\n")
        .map((line, i) => ({ line: line.trim(), at: `${relative(SRC, p)}:${i + 1}` }))
        .filter(({ line }) => !line.startsWith("//") && !line.startsWith("*") && !line.startsWith("/**"))
        .filter(({ line }) => /^(cli|mcp):\s*["'`]/.test(line) || tools.test(line))
        .map(({ at, line }) => `${at}: ${line}`),
    );
    expect(bad).toEqual([]);
  });

  test("src/ has no import cycles (import type included)", () => {
    expect(cyclesOf(importGraph())).toEqual([]);
  });

  test("the cycle check finds a cycle and names its path", () => {
    const g = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(cyclesOf(g)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
    g.set("d.ts", ["d.ts"]);
    expect(cyclesOf(g)).toEqual(["a.ts → b.ts → c.ts → a.ts", "d.ts → d.ts"]);
  });

  /** The modules `file` evaluates as soon as it is: its static imports, transitively (`import type` excluded). */
  function eagerClosure(...roots: string[]): string[] {
    const eager = (file: string) =>
      [
        ...readFileSync(join(SRC, file), "utf8")
          .replace(/(^|\n)\s*import type [^;]*;/g, "\n")
          .matchAll(/(?:^|\n)\s*(?:import|export)(?!\s+type\b)[^'"]*?from\s+"([^"]+)"/g),
      ].map((m) => m[1]!);
    const seen = new Set<string>();
    const stack = [...roots];
    while (stack.length) {
      const f = stack.pop()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const i of eager(f)) {
        if (!i.startsWith(".") || !i.endsWith(".ts")) continue;
        stack.push(relative(SRC, join(SRC, f, "..", i)));
      }
    }
    return [...seen].sort();
  }

  test("plain CLI paths never load the MCP SDK eagerly", () => {
    expect(eagerClosure("main.ts").filter((f) => f.startsWith("mcp/") || f === "mcp-entry.ts")).toEqual([]);
  });

  // What a local command loads before it knows its job: the CLI (main.ts) and the context (context.ts, imported by
  // every command that opens the store). SSH, Slurm, 0.8, the MCP server and the dashboard are loaded on first use
  // (test/local/command-modules.test.ts checks what a command really evaluates).
  test("a local command's start reaches no MCP, dashboard, SSH, Slurm, 0.8 or host-program module", () => {
    const reached = eagerClosure("main.ts", "context.ts");
    expect(reached).toContain("backends/local/local-backend.ts");
    expect(
      reached.filter((f) =>
        /^(mcp\/|mcp-entry\.ts|ui\/|ssh\/|backends\/(ssh|slurm|awaitless08)\/|wrapper\/host-scripts\.ts)/.test(
          f,
        ),
      ),
    ).toEqual([]);
  });
});
