// Every source file the docs name exists: each `*.ts`/`*.sh` path in a code span of the markdown pages (and in
// docs/architecture.md's layout blocks), and each src/ or core/ path in a comment of src/, is a file of the checkout.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ROOT } from "../helpers/cli.ts";
import { markdownLines } from "./markdown-links.ts";

const SKIP_DIRS = new Set([".git", "node_modules", "dist", "ci-artifacts"]);

/** Every file of the checkout (relative to it), outside the build output and installed packages. */
function repoFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP_DIRS.has(e.name)) return [];
    const p = join(dir, e.name);
    if (e.isDirectory()) return repoFiles(p);
    return e.isFile() ? [relative(ROOT, p)] : [];
  });
}

/** Files of other projects the docs name (where a client's behaviour was read), not ours. */
const OTHER_PROJECTS = [/^src\/vs\//]; // microsoft/vscode

/** A source file name: `.ts` always; `.sh` only with a directory (a bare `x.sh` is a user's script or a job's file). */
export function sourcePathsIn(text: string): string[] {
  return text
    .split(/[\s(),;:'"`[\]]+/)
    .filter((w) => /^[\w./-]+\.(ts|sh)$/.test(w) && (w.endsWith(".ts") || w.includes("/")))
    .filter((w) => !w.startsWith("./") && !w.startsWith("/") && !/HASH/.test(w));
}

/** What is wrong with a named path, or undefined when it names a file of the checkout. */
export function problemOf(path: string, from: string, files: readonly string[]): string | undefined {
  if (OTHER_PROJECTS.some((re) => re.test(path))) return undefined;
  const clean = path.replace(/^(\.\.\/)+/, "");
  if (!clean.includes("/")) {
    return files.some((f) => f === clean || f.endsWith(`/${clean}`)) ? undefined : "no file of that name";
  }
  const near = join(dirname(from), path);
  if (files.includes(clean) || files.includes(near) || files.some((f) => f.endsWith(`/${clean}`)))
    return undefined;
  return "no such file";
}

/** Code spans of a page's prose, and (for the architecture page) the lines of its fenced layout blocks. */
function namedIn(file: string, text: string): { line: number; text: string }[] {
  return markdownLines(text).flatMap(({ line, text: l, fenced }) => {
    if (fenced) return file === "docs/architecture.md" ? [{ line, text: l }] : [];
    return [...l.matchAll(/`([^`]+)`/g)].map((m) => ({ line, text: m[1]! }));
  });
}

const files = repoFiles();
const pages = files
  .filter(
    (f) =>
      f === "README.md" ||
      /^docs\/.*\.md$/.test(f) ||
      /^bench\/[^/]*\.md$/.test(f) ||
      /^test\/.*README\.md$/.test(f) ||
      f === "npm/README.md" ||
      f === "skills/awaitless/SKILL.md",
  )
  .sort();

describe("source paths named in the docs", () => {
  test("the check reads names as written, and finds the stale ones", () => {
    expect(
      sourcePathsIn("see `src/core/store/job-store.ts` (and job/monitor.sh, ./bench.sh, spec.sh)"),
    ).toEqual(["src/core/store/job-store.ts", "job/monitor.sh"]);
    expect(sourcePathsIn("~/.awaitless/bin/wrapper-HASH.sh host/*.sh")).toEqual([]);
    const some = ["src/core/store/job-store.ts", "src/wrapper/job/monitor.sh", "test/docs/links.test.ts"];
    expect(problemOf("src/core/store/job-store.ts", "docs/x.md", some)).toBeUndefined();
    expect(problemOf("store/job-store.ts", "docs/x.md", some)).toBeUndefined();
    expect(problemOf("job-store.ts", "docs/x.md", some)).toBeUndefined();
    expect(problemOf("job/monitor.sh", "docs/x.md", some)).toBeUndefined();
    expect(problemOf("src/core/job-store.ts", "docs/x.md", some)).toBe("no such file");
    expect(problemOf("awaitless08-store.ts", "docs/x.md", some)).toBe("no file of that name");
  });

  test("every *.ts and *.sh path in the markdown pages' code spans (and architecture.md's layout) exists", () => {
    expect(pages).toContain("docs/architecture.md");
    const named = pages.flatMap((page) =>
      namedIn(page, readFileSync(join(ROOT, page), "utf8")).flatMap(({ line, text }) =>
        sourcePathsIn(text).map((path) => ({ at: `${page}:${line}`, path, page })),
      ),
    );
    expect(named.length).toBeGreaterThan(200);
    const stale = named.flatMap(({ at, path, page }) => {
      const p = problemOf(path, page, files);
      return p ? [`${at}: ${path} (${p})`] : [];
    });
    expect(stale).toEqual([]);
  });

  test("every src/ or core/ path in a comment of src/ exists", () => {
    const stale = files
      .filter((f) => f.startsWith("src/") && /\.(ts|sh)$/.test(f))
      .flatMap((f) =>
        readFileSync(join(ROOT, f), "utf8")
          .split("\n")
          .flatMap((l, i) => {
            const comment = /^\s*(\/\/|\*|\/\*\*|#)(.*)$/.exec(l)?.[2];
            if (comment === undefined) return [];
            return sourcePathsIn(comment)
              .filter((p) => /^(src|core)\//.test(p))
              .filter((p) => problemOf(p, f, files))
              .map((p) => `${f}:${i + 1}: ${p}`);
          }),
      );
    expect(stale).toEqual([]);
  });
});
