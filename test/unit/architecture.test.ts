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

/** Each src file with the src files it names, `import type` included (relative to src/). */
const deps = files(SRC).map((p) => ({
  file: relative(SRC, p),
  targets: allImportsOf(p)
    .filter((i) => i.startsWith("."))
    .map((i) => relative(SRC, join(p, "..", i))),
}));

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

  // core/'s rooms (docs/architecture.md): the lower ones import only what is below them, `import type` included.
  const BELOW: Record<string, string[]> = {
    model: [],
    util: ["model"],
    backend: ["model", "util", "logs"],
    rules: ["model", "util", "backend"],
    store: ["model", "util", "backend", "rules"],
  };
  const coreDeps = deps.filter((f) => f.file.startsWith("core/"));
  const roomOf = (file: string) => file.split("/")[1]!;

  test("core's files are all in rooms (no file directly in src/core)", () => {
    expect(coreDeps.filter((f) => f.file.split("/").length !== 3).map((f) => f.file)).toEqual([]);
  });

  for (const [room, below] of Object.entries(BELOW)) {
    test(`core/${room}/ imports only ${below.length ? below.map((r) => `${r}/`).join(", ") : "itself"}`, () => {
      const bad = coreDeps
        .filter((f) => roomOf(f.file) === room)
        .flatMap((f) =>
          f.targets
            .filter((t) => t.startsWith("core/") && roomOf(t) !== room && !below.includes(roomOf(t)))
            .map((t) => `${f.file} → ${t}`),
        );
      expect(bad).toEqual([]);
    });
  }

  // SQL statements in string literals, or a statement run on a database handle.
  const SQL =
    /["'`]\s*(SELECT\b|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TABLE|INDEX|UNIQUE)|PRAGMA\b|BEGIN (IMMEDIATE|EXCLUSIVE)|COMMIT\b|ROLLBACK\b)|\bdb\.(query|exec|prepare|run)\(/;
  // The one reader of another database: Awaitless 0.8's, copied and read row by row as hostile input.
  const SQL_OUTSIDE_STORE = ["core/import-08/store-08.ts"];

  test("only core/store/ holds SQL or imports the SQLite module (and import-08/store-08.ts reads 0.8's database)", () => {
    const holders = files(SRC)
      .map((p) => relative(SRC, p))
      .filter((f) => !f.startsWith("core/store/") && SQL.test(readFileSync(join(SRC, f), "utf8")));
    const importers = deps
      .filter((f) => !f.file.startsWith("core/store/") && f.targets.includes("core/store/sqlite.ts"))
      .map((f) => f.file);
    expect([...new Set([...holders, ...importers])].sort()).toEqual(SQL_OUTSIDE_STORE);
  });

  test("the SQL check sees a statement and a query on a handle", () => {
    expect(SQL.test('db.query("SELECT job_id FROM jobs")')).toBe(true);
    expect(SQL.test("`UPDATE jobs SET state = ?`")).toBe(true);
    expect(SQL.test('marker === "BEGIN"')).toBe(false);
  });

  test("core/store/ is reached only from core (never model/, util/) and the composition root (context.ts)", () => {
    const bad = deps
      .filter((f) => !f.file.startsWith("core/store/"))
      .filter((f) => f.targets.some((t) => t.startsWith("core/store/")))
      .filter((f) => f.file !== "context.ts")
      .filter((f) => !f.file.startsWith("core/") || ["model", "util"].includes(roomOf(f.file)))
      .map((f) => f.file);
    expect(bad).toEqual([]);
  });

  test("backends reach core through its model, rules and the Backend port: never the store or the service", () => {
    const bad = deps
      .filter((f) => /^(backends|wrapper|ssh)\//.test(f.file))
      .flatMap((f) =>
        f.targets.filter((t) => /^core\/(store|service)\//.test(t)).map((t) => `${f.file} → ${t}`),
      );
    expect(bad).toEqual([]);
  });

  // `awaitless import` is its own use case (Ctx.import08), not one of the job service's: the CLI finds the 0.8 store.
  const SURFACE_EXTRA = ["cli/import-command.ts → core/import-08/", "cli/import-offer.ts → core/import-08/"];

  test("surfaces (cli, mcp, ui) use core's model (JobServiceApi and its shapes) and pure helpers only", () => {
    const bad = deps
      .filter((f) => /^(cli|mcp|ui)\//.test(f.file))
      .flatMap((f) =>
        f.targets
          .filter((t) => t.startsWith("core/") && !["model", "util"].includes(roomOf(t)))
          .map((t) => `${f.file} → core/${roomOf(t)}/`),
      );
    expect([...new Set(bad)].sort()).toEqual(SURFACE_EXTRA);
  });

  // A backend's name as a value in core's code (comments aside): core asks a backend's capabilities instead
  // (Backend.capabilities, ServiceSettings.capabilitiesOf). model/backend-id.ts declares BackendName, the wire word of
  // every job, and what each backend stores as a job's backend_id; model/job.ts names Slurm's accounting as a source.
  const NAME = String.raw`["'\`](local|ssh|slurm|awaitless08)["'\`]`;
  const NAMED = new RegExp(NAME, "g");
  // The names core still writes, none of them a branch on what a backend can do:
  const NAMES_LEFT: Record<string, number> = {
    // Awaitless 0.8's rows name their backend; the import reads that word (where 0.8 kept the logs, which rows it takes)
    "core/import-08/import-08.ts": 2,
    "core/import-08/map-08.ts": 4,
    // a queue's target is "local" or a host name (a stored word, not a backend)
    "core/queues/queue-service.ts": 1,
    "core/store/queue-table.ts": 2,
    // backendFor picks the backend object by its key (a watched or imported 0.8 job by its backend_id)
    "core/service/job-service.ts": 3,
    // the config's types (BackendName spelled out), and ssh as the backend of a host whose config names none
    "core/service/launch-request.ts": 3,
    "core/service/service-context.ts": 5,
  };

  /** Code lines of core's files (comments aside), by path relative to src/. */
  function coreCode(): [string, string][] {
    return files(join(SRC, "core")).map((p) => [
      relative(SRC, p),
      readFileSync(p, "utf8")
        .split("\n")
        .filter((l) => !/^\s*(\/\/|\*|\/\*\*)/.test(l))
        .join("\n"),
    ]);
  }

  test("core never names a backend outside its model (it asks what a backend can do)", () => {
    const named: Record<string, number> = {};
    for (const [file, code] of coreCode()) {
      if (file === "core/model/backend-id.ts" || file === "core/model/job.ts") continue;
      const n = [...code.matchAll(NAMED)].length;
      if (n > 0) named[file] = n;
    }
    expect(named).toEqual(NAMES_LEFT);
  });

  // A backend field (job.backend, spec.backend, a `backend` variable, hostBackends[h]) compared with a backend's name,
  // either way round, in a switch, or looked up in a list of names: a branch on the name, not on a capability.
  const BRANCH = new RegExp(
    [
      String.raw`\w*backend\w*(\?\.)?(\[\w+\])?\s*[!=]==?\s*${NAME}`,
      String.raw`${NAME}\s*[!=]==?\s*[\w.?]*backend`,
      String.raw`case\s+${NAME}\s*:`,
      String.raw`${NAME}\s*\]\.includes\(\s*[\w.?]*backend`,
    ].join("|"),
    "gi",
  );
  const BRANCHES_LEFT: Record<string, number> = {
    // parsing Awaitless 0.8's rows: their backend word is data of the import (which rows it takes, where the logs are)
    "core/import-08/import-08.ts": 1,
    "core/import-08/map-08.ts": 2,
  };

  test("core branches on no backend's name: it asks the backend's capabilities", () => {
    const branches: Record<string, number> = {};
    for (const [file, code] of coreCode()) {
      const n = [...code.matchAll(BRANCH)].length;
      if (n > 0) branches[file] = n;
    }
    expect(branches).toEqual(BRANCHES_LEFT);
  });

  test("the branch check sees a comparison either way round, a switch and a list of names", () => {
    const sees = (code: string) => [...code.matchAll(BRANCH)].length;
    expect(sees('if (job.backend === "slurm") {')).toBe(1);
    expect(sees("const remote = backend !== 'local';")).toBe(1);
    expect(sees('settings.hostBackends?.[host] === "slurm"')).toBe(1);
    expect(sees('"ssh" == parent.backend')).toBe(1);
    expect(sees('case "slurm":')).toBe(1);
    expect(sees('["local", "ssh", "slurm"].includes(j.backend)')).toBe(1);
    expect(sees('if (backend.capabilities.nativeArrays) return "local";')).toBe(0);
    expect(sees('row.target === "local"')).toBe(0);
  });

  // A backend_id is read as its backend's type once, where the store reads the row (model/backend-id.ts), and through
  // that module's accessors after: never asserted to be one with a cast.
  const ID_CAST = /\bas\s+(\{[^}]*\}|[A-Za-z]*BackendId)(\s*\|\s*(null|Error|undefined))*\s*[);,]?/g;
  test("no backend_id is cast to a type: each is parsed once and read through its accessors", () => {
    const casts = files(SRC).flatMap((p) =>
      [...readFileSync(p, "utf8").matchAll(ID_CAST)]
        .filter((m) =>
          /BackendId|slurm_job_id|remote_dir|wrapper_pid|array_tag|submit_unconfirmed/.test(m[0]),
        )
        .map((m) => `${relative(SRC, p)}: ${m[0]}`),
    );
    expect(casts).toEqual([]);
  });

  test("the cast check sees a cast to a backend ID type or to an object of its fields", () => {
    const sees = (line: string) =>
      [...line.matchAll(ID_CAST)].filter((m) => /BackendId|slurm_job_id/.test(m[0])).length;
    expect(sees("const bid = (job.backend_id ?? {}) as SlurmBackendId;")).toBe(1);
    expect(sees("const id = (job.backend_id as SlurmBackendId | null)?.slurm_job_id;")).toBe(1);
    expect(sees("const id = ids[i] as SlurmBackendId | Error;")).toBe(1);
    expect(sees("const b = job.backend_id as { slurm_job_id?: string } | null;")).toBe(1);
    expect(sees("const id = slurmIdOf(job)?.slurm_job_id;")).toBe(0);
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

  // The CLI works on jobs through Ctx's JobServiceApi. `doctor` examines this machine and each host itself, so it
  // loads each backend's doctor module (on use); completion lists ~/.ssh/config's Host aliases with the SSH client
  // library's reader of that file, without making a backend or contacting a host.
  const CLI_REACHES = [
    "cli/completion-lists.ts → ssh/ssh-config-aliases.ts",
    "cli/doctor.ts → backends/local/boot-doctor.ts",
    "cli/doctor.ts → backends/local/tracking-doctor.ts",
    "cli/doctor.ts → backends/slurm/doctor.ts",
    "cli/doctor.ts → backends/ssh/doctor.ts",
  ];

  test("the CLI reaches a backend or ssh/ only through doctor modules and completion's Host aliases", () => {
    const reached = all
      .filter((f) => f.file.startsWith("cli/"))
      .flatMap((f) => f.targets.filter((t) => /^(backends|ssh)\//.test(t)).map((t) => `${f.file} → ${t}`));
    expect([...new Set(reached)].sort()).toEqual(CLI_REACHES);
  });

  test("the dashboard (ui/) knows the job service's interface only: no backend, store, wrapper, config or surface", () => {
    const bad = all
      .filter((f) => f.file.startsWith("ui/"))
      .flatMap((f) =>
        f.targets
          .filter((t) => /^(backends|wrapper|config|cli|mcp|ssh)\//.test(t))
          .map((t) => `${f.file} → ${t}`),
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

  test("each MCP tool is one file of src/mcp/tools/ named after it, made by defineTool, listed in catalog.ts", () => {
    const dir = join(SRC, "mcp", "tools");
    const catalog = readFileSync(join(dir, "catalog.ts"), "utf8");
    const tools = readdirSync(dir)
      .filter((f) => f !== "define.ts")
      .map((f) => ({ file: f, text: readFileSync(join(dir, f), "utf8") }))
      .filter(({ text }) => text.includes("defineTool("));
    expect(tools.length).toBeGreaterThanOrEqual(11);
    for (const { file, text } of tools) {
      const names = [...text.matchAll(/defineTool\(\{\s*name: "([a-z_]+)"/g)].map((m) => m[1]!);
      expect({ file, names }).toEqual({ file, names: [file.replace(/\.ts$/, "").replaceAll("-", "_")] });
      expect({ file, listed: catalog.includes(`from "./${file}"`) }).toEqual({ file, listed: true });
      expect({ file, lines: text.split("\n").length <= 150 }).toEqual({ file, lines: true });
    }
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
    expect(
      eagerClosure("main.ts", "start.ts").filter((f) => f.startsWith("mcp/") || f === "mcp-entry.ts"),
    ).toEqual([]);
  });

  // What a local command loads before it knows its job: the CLI (start.ts) and the context (context.ts, imported by
  // every command that opens the store). SSH, Slurm, 0.8, the MCP server and the dashboard are loaded on first use
  // (test/local/command-modules.test.ts checks what a command really evaluates).
  // The entry answers the version alone: the rest of the program is a chunk of the split bundle it imports on demand.
  test("the entry (main.ts) imports only the version and starts the program with import()", () => {
    expect(eagerClosure("main.ts")).toEqual(["main.ts", "version.ts"]);
    expect(readFileSync(join(SRC, "main.ts"), "utf8")).toContain('import("./start.ts")');
  });

  test("a local command's start reaches no MCP, dashboard, SSH, Slurm, 0.8 or host-program module", () => {
    const reached = eagerClosure("main.ts", "start.ts", "context.ts");
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
