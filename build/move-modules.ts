// Moves TypeScript modules and rewrites every relative import of them (src, test, bench, build), and the paths
// that name them in comments and docs: `bun build/move-modules.ts OLD=NEW …` (paths from the repository root),
// or `--renames FILE` with one `OLD NEW` pair a line (as `git diff -M --name-status BASE` prints them after `R…`).
// With `--imports-only` nothing is moved: a branch written before a move gets its imports rewritten by the same map.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const TREES = ["src", "test", "bench", "build"];
const TEXT_FILES = /\.(ts|md|sh)$/;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name === "fixtures") return [];
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

function parseArgs(argv: string[]): { map: Map<string, string>; move: boolean } {
  const map = new Map<string, string>();
  let move = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--imports-only") move = false;
    else if (a === "--renames") {
      for (const line of readFileSync(argv[++i]!, "utf8").split("\n")) {
        const [from, to] = line.trim().split(/\s+/);
        if (from && to) map.set(from, to);
      }
    } else {
      const [from, to] = a.split("=");
      if (!from || !to) throw new Error(`not OLD=NEW: ${a}`);
      map.set(from, to);
    }
  }
  return { map, move };
}

const { map, move } = parseArgs(process.argv.slice(2));
const abs = new Map([...map].map(([f, t]) => [resolve(ROOT, f), resolve(ROOT, t)]));

// Where each file is now and will be: a moved file's imports are resolved from its old place.
const files = TREES.flatMap((t) => walk(join(ROOT, t))).filter((p) => p.endsWith(".ts"));
const IMPORT_RE =
  /((?:^|\n)\s*(?:import|export)[^'"]*?from\s+|import\(\s*|require\(\s*|mock\.module\(\s*|import\s+)"(\.[^"]+)"/g;

function specFor(fromFile: string, target: string): string {
  let r = relative(dirname(fromFile), target);
  if (!r.startsWith(".")) r = `./${r}`;
  return r;
}

for (const oldPath of files) {
  const newPath = abs.get(oldPath) ?? oldPath;
  const text = readFileSync(oldPath, "utf8");
  const out = text.replace(IMPORT_RE, (whole, head: string, spec: string) => {
    const target = resolve(dirname(oldPath), spec);
    const moved = abs.get(target) ?? target;
    if (moved === target && newPath === oldPath) return whole;
    return `${head}"${specFor(newPath, moved)}"`;
  });
  if (out !== text) writeFileSync(oldPath, out);
}

if (move) {
  for (const [from, to] of abs) {
    mkdirSync(dirname(to), { recursive: true });
    execFileSync("git", ["mv", from, to], { cwd: ROOT });
  }
}

// Paths in comments, strings and docs: `src/core/x.ts` and `core/x.ts` (not part of a longer path).
const pairs = [...map]
  .map(([f, t]) => [f.replace(/^src\//, ""), t.replace(/^src\//, "")] as const)
  .sort((a, b) => b[0].length - a[0].length);
const texts = [
  ...TREES.flatMap((t) => walk(join(ROOT, t))),
  ...walk(join(ROOT, "docs")),
  join(ROOT, "README.md"),
]
  .filter((p) => TEXT_FILES.test(p) && existsSync(p))
  .filter((p) => !p.startsWith(join(ROOT, "src", "wrapper")) || p.endsWith(".ts"));
for (const p of texts) {
  const text = readFileSync(p, "utf8");
  let out = text;
  for (const [from, to] of pairs) {
    const esc = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(
      new RegExp(`((?<![\\w-])src/|(?<![\\w./-]))${esc}(?![\\w-])`, "g"),
      (_m, src) => `${src}${to}`,
    );
  }
  if (out !== text) writeFileSync(p, out);
}
