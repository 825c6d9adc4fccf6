// skills/awaitless/SKILL.md stays in sync with the MCP tools: names, example arguments, field names, rules.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JOB_STATES } from "../../src/core/model/job.ts";
import { parseArgs } from "../../src/mcp/tools/args.ts";
import { TOOLS } from "../../src/mcp/tools/catalog.ts";

const ROOT = join(import.meta.dir, "..", "..");
const skill = readFileSync(join(ROOT, "skills", "awaitless", "SKILL.md"), "utf8");
const wire = ["src/core/model/service-api.ts", "src/core/model/job.ts"]
  .map((f) => readFileSync(join(ROOT, f), "utf8"))
  .join("\n");

function frontmatter(text: string): { name: string; description: string } {
  const m = text.match(/^---\n([\s\S]*?)\n---\n/);
  if (!m) throw new Error("SKILL.md has no YAML frontmatter");
  return Bun.YAML.parse(m[1]!) as { name: string; description: string };
}

const schemaKeys = (name: string): string[] =>
  Object.keys((TOOLS[name]!.schema as unknown as { entries: Record<string, unknown> }).entries);

describe("SKILL.md", () => {
  test("frontmatter: name and a description that says when to use it", () => {
    const fm = frontmatter(skill);
    expect(fm.name).toBe("awaitless");
    expect(fm.description.length).toBeGreaterThan(50);
    expect(fm.description.length).toBeLessThanOrEqual(1024);
    expect(fm.description).toMatch(/without sleeping or polling/);
  });

  test("the tool table lists exactly the server's tools", () => {
    const rows = [...skill.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(Object.keys(TOOLS).sort());
  });

  test("every example call is valid input for its tool, with no unknown argument", () => {
    const examples = [...skill.matchAll(/```json ([a-z_]+)\n([\s\S]*?)```/g)];
    expect(examples.length).toBeGreaterThanOrEqual(5);
    for (const [, tool, body] of examples) {
      expect(Object.keys(TOOLS)).toContain(tool!);
      const args = JSON.parse(body!) as Record<string, unknown>;
      const parsed = parseArgs(TOOLS[tool!]!.schema, args);
      expect(parsed.ok ? "ok" : `${tool}: ${parsed.message}`).toBe("ok");
      for (const key of Object.keys(args)) expect(schemaKeys(tool!)).toContain(key);
    }
  });

  test("every field, argument or state it names in backticks exists", () => {
    const inputKeys = new Set(Object.keys(TOOLS).flatMap(schemaKeys));
    const named = new Set([...skill.matchAll(/`([a-z]+(?:_[a-z]+)+|[a-z]+)`/g)].map((m) => m[1]!));
    const known = (w: string) =>
      w in TOOLS ||
      inputKeys.has(w) ||
      (JOB_STATES as readonly string[]).includes(w) ||
      new RegExp(`\\b${w}\\b`).test(wire) ||
      ["awaitless", "sleep", "sbatch"].includes(w);
    expect([...named].filter((w) => !known(w))).toEqual([]);
  });

  test("teaches the rules the tool descriptions state: run by default, continue with wait_for_job, never sleep", () => {
    expect(TOOLS.run!.description).toMatch(/the default for any command of unknown duration/);
    expect(skill).toMatch(/## The one rule: call `run` by default/);
    expect(TOOLS.run!.description).toMatch(/delivery "detached".*then call wait_for_job/);
    expect(skill).toMatch(/`delivery: "detached"`[\s\S]{0,200}Continue with `wait_for_job`/);
    expect(TOOLS.wait_for_job!.description).toMatch(/client_timeout.*call it again/);
    expect(skill).toMatch(/`wait_state: "client_timeout"`[\s\S]{0,200}call `wait_for_job`\s+again/);
    expect(TOOLS.wait_for_job!.description).toMatch(/Never sleep or poll/);
    expect(skill).toMatch(/## Never sleep, never poll/);
  });
});
