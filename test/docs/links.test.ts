// Every relative link and #anchor in README.md and docs/ leads somewhere: the file exists in the repository
// and the anchor is one of its headings as GitHub slugs them (explicit <a id> anchors are not counted).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "../helpers/cli.ts";
import { anchorsOf, headingText, isExternal, type Link, linksOf, slug } from "./markdown-links.ts";

/** README.md, every page of docs/, and the agent skill. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f));
  return ["README.md", ...docs, "skills/awaitless/SKILL.md"].sort();
}

const anchorCache = new Map<string, Set<string>>();
function anchorsIn(path: string): Set<string> {
  const known = anchorCache.get(path);
  if (known) return known;
  const a = anchorsOf(readFileSync(path, "utf8"));
  anchorCache.set(path, a);
  return a;
}

/** What is wrong with one link, or undefined when it leads somewhere. */
export function problemOf(link: Link): string | undefined {
  if (isExternal(link.target)) return undefined;
  const [pathPart, anchor] = link.target.split("#", 2) as [string, string | undefined];
  if (link.target.startsWith("/")) return "an absolute path: write it relative to this file";
  const path =
    pathPart === "" ? join(ROOT, link.file) : resolve(ROOT, dirname(link.file), decodeURI(pathPart));
  const inRepo = relative(ROOT, path);
  if (inRepo.startsWith("..")) return `leads outside the repository (${inRepo})`;
  if (!existsSync(path)) return `no such file ${inRepo}`;
  if (anchor === undefined) return undefined;
  if (statSync(path).isDirectory() || !path.endsWith(".md"))
    return `an anchor into ${inRepo}, which is not a page`;
  if (!anchorsIn(path).has(anchor)) {
    const near = [...anchorsIn(path)].filter((a) => a.includes(anchor) || anchor.includes(a)).slice(0, 3);
    return `${inRepo} has no heading #${anchor}${near.length ? ` (near: ${near.map((a) => `#${a}`).join(", ")})` : ""}`;
  }
  return undefined;
}

describe("GitHub's heading anchors", () => {
  test("are slugged as GitHub does", () => {
    expect(slug(headingText("doctor --host NAME"))).toBe("doctor---host-name");
    expect(slug(headingText("Cancel: one TERM, then KILL after the grace"))).toBe(
      "cancel-one-term-then-kill-after-the-grace",
    );
    expect(slug(headingText("Agent economy (`bench/agent-economy.ts`, time-scaled 20×)"))).toBe(
      "agent-economy-benchagent-economyts-time-scaled-20",
    );
    expect(slug(headingText('transport = "openssh"'))).toBe("transport--openssh");
    expect(slug(headingText("Tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28)"))).toBe(
      "tasks-extension-iomodelcontextprotocoltasks-2026-07-28",
    );
    expect(slug(headingText("`job_id` and [links](x.md) — **bold** é_x"))).toBe("job_id-and-links--bold-é_x");
  });

  test("a repeated heading gets -1, -2; headings inside code fences do not count", () => {
    const a = anchorsOf("# Tests\n## Tests\n```sh\n# not a heading\n```\n### Tests ###\n");
    expect([...a]).toEqual(["tests", "tests-1", "tests-2"]);
  });

  test("links are read outside code spans and fences; problems are named", () => {
    const text = "see [a](b.md#c) and `[x](nope.md)`\n```md\n[y](nope.md)\n```\n[ref]: ./docs/cli.md\n";
    expect(linksOf("README.md", text).map((l) => `${l.line}:${l.target}`)).toEqual([
      "1:b.md#c",
      "5:./docs/cli.md",
    ]);
    expect(problemOf({ file: "docs/cli.md", line: 1, target: "slurm.md#no-such-heading" })).toContain(
      "docs/slurm.md has no heading #no-such-heading",
    );
    expect(problemOf({ file: "docs/cli.md", line: 1, target: `../../${"shared"}/x.md` })).toContain(
      "leads outside the repository",
    );
    expect(problemOf({ file: "README.md", line: 1, target: "docs/nope.md" })).toBe(
      "no such file docs/nope.md",
    );
    expect(problemOf({ file: "README.md", line: 1, target: "https://example.com/x#y" })).toBeUndefined();
  });
});

test("every relative link and #anchor in README.md and docs/ leads to a file and a heading", () => {
  const files = markdownFiles();
  expect(files).toContain("docs/cli.md");
  const links = files.flatMap((f) => linksOf(f, readFileSync(join(ROOT, f), "utf8")));
  expect(links.length).toBeGreaterThan(20);
  const broken = links.flatMap((l) => {
    const p = problemOf(l);
    return p ? [`${l.file}:${l.line}: (${l.target}) ${p}`] : [];
  });
  expect(broken).toEqual([]);
});
