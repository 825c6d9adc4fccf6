// Nothing in the repository points a reader at a file it does not hold: the job protocol is docs/protocol.md,
// and no text names a directory outside the checkout or a path of the machine it was written on.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../helpers/cli.ts";

const SKIP_DIRS = new Set([".git", "node_modules", "dist", "ci-artifacts"]);

/** Every text file of the checkout (tracked or not), outside the build output and installed packages. */
function textFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (SKIP_DIRS.has(e.name)) continue; // a worktree's .git is a file
    if (e.isDirectory()) {
      out.push(...textFiles(p));
    } else if (e.isFile() && statSync(p).size < 4_000_000) {
      const bytes = readFileSync(p);
      if (!bytes.subarray(0, 8000).includes(0)) out.push(p);
    }
  }
  return out;
}

// Spelled in parts, so this file does not match itself.
const POINTERS: [RegExp, string][] = [
  [new RegExp(`\\b${"PROTOCOL"}\\.md`), "point at docs/protocol.md, or say it in place"],
  [new RegExp(`\\b${"PRODUCT"}\\.md`), "say the promise in place (README.md or the page of that feature)"],
  [new RegExp(`\\b${"ARCHITECTURE"}\\.md`), "point at docs/architecture.md"],
  [new RegExp(`\\.\\./${"shared"}\\b`), "the repository holds everything a reader needs"],
  [new RegExp(`(^|[\\s"'\`(=:])/${"work"}/`), "a path of one machine: write it relative to the checkout"],
];

test("no file points at the protocol or product texts outside the repository, or at a machine's paths", () => {
  const files = textFiles();
  expect(files.some((f) => f.endsWith(join("src", "main.ts")))).toBe(true);
  const found: string[] = [];
  for (const f of files) {
    const lines = readFileSync(f, "utf8").split("\n");
    lines.forEach((l, i) => {
      for (const [re, fix] of POINTERS)
        if (re.test(l)) found.push(`${relative(ROOT, f)}:${i + 1}: ${l.trim().slice(0, 100)} — ${fix}`);
    });
  }
  expect(found).toEqual([]);
});
