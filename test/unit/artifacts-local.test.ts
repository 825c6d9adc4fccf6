import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectLocalArtifacts } from "../../src/backends/local/artifacts-local.ts";
import { REDACTED, Redactor } from "../../src/core/util/redact.ts";

let base: string;
let cwd: string;
let outside: string;
const sha = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");
const opts = { maxInlineBytes: 1024 };

function write(rel: string, content: string | Uint8Array): void {
  const abs = join(cwd, rel);
  mkdirSync(join(abs, ".."), { recursive: true });
  writeFileSync(abs, content);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "awaitless-artifacts-"));
  cwd = join(base, "job");
  outside = join(base, "outside");
  mkdirSync(cwd);
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.json"), '{"leak":true}');
  write("metrics.json", '{"loss":0.25,"token":"hunter2hunter2"}');
  write("notes.txt", "hello\n");
  write("bad.json", "{oops");
  write("big.json", JSON.stringify({ data: "x".repeat(2000) }));
  write("out/a.json", "[1]");
  write("out/deep/b.txt", "b");
  write("out/.hidden.json", "{}");
  write("empty/.keep", "");
  mkdirSync(join(cwd, "nothing"));
  symlinkSync(join(outside, "secret.json"), join(cwd, "escape.json"));
  symlinkSync(outside, join(cwd, "outdir"));
  symlinkSync(join(cwd, "metrics.json"), join(cwd, "latest.json"));
  symlinkSync(join(cwd, "missing-target"), join(cwd, "dangling.json"));
  utimesSync(
    join(cwd, "notes.txt"),
    new Date("2024-05-06T07:08:09.123Z"),
    new Date("2024-05-06T07:08:09.123Z"),
  );
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("collectLocalArtifacts", () => {
  test("describes a plain file with size, sha256, mtime and no content", async () => {
    expect(await collectLocalArtifacts(cwd, ["notes.txt"], opts)).toEqual([
      {
        path: "notes.txt",
        declared_path: "notes.txt",
        exists: true,
        remote: false,
        size_bytes: 6,
        sha256: sha("hello\n"),
        modified_at: "2024-05-06T07:08:09.123Z",
      },
    ]);
  });

  test("inlines a JSON file within the bound, redacting string values", async () => {
    const [m] = await collectLocalArtifacts(cwd, ["./metrics.json"], {
      ...opts,
      redactor: new Redactor(["hunter2hunter2"]),
    });
    expect(m?.path).toBe("metrics.json");
    expect(m?.declared_path).toBe("./metrics.json");
    expect(m?.content).toEqual({ loss: 0.25, token: REDACTED });
    expect(m?.sha256).toBe(sha('{"loss":0.25,"token":"hunter2hunter2"}'));
  });

  test("an oversized JSON file is hashed whole but not inlined", async () => {
    const [big] = await collectLocalArtifacts(cwd, ["big.json"], opts);
    const text = JSON.stringify({ data: "x".repeat(2000) });
    expect(big).toMatchObject({ exists: true, size_bytes: text.length, sha256: sha(text) });
    expect(big?.content).toBeUndefined();
    expect(big?.parse_error).toBe(`too large to inline (${text.length} bytes > 1024)`);
  });

  test("invalid JSON gives a parse_error and no content", async () => {
    const [bad] = await collectLocalArtifacts(cwd, ["bad.json"], opts);
    expect(bad?.exists).toBe(true);
    expect(bad?.parse_error).toStartWith("invalid JSON: ");
    expect(bad && "content" in bad).toBe(false);
  });

  test("a directory lists its files recursively, dot files included, sorted", async () => {
    const entries = await collectLocalArtifacts(cwd, ["out/"], opts);
    expect(entries.map((e) => [e.path, e.declared_path, e.exists])).toEqual([
      ["out/.hidden.json", "out/", true],
      ["out/a.json", "out/", true],
      ["out/deep/b.txt", "out/", true],
    ]);
    expect(entries[1]?.content).toEqual([1]);
  });

  test("a directory larger than the bound is cut with a note", async () => {
    const entries = await collectLocalArtifacts(cwd, ["out"], { ...opts, maxEntriesPerDeclaration: 2 });
    expect(entries.map((e) => e.path)).toEqual(["out/", "out/.hidden.json", "out/a.json"]);
    expect(entries[0]?.reason).toContain("more than 2 files");
  });

  test("an empty directory is one missing entry", async () => {
    expect(await collectLocalArtifacts(cwd, ["nothing"], opts)).toEqual([
      {
        path: "nothing",
        declared_path: "nothing",
        exists: false,
        remote: false,
        reason: "directory has no files",
      },
    ]);
  });

  test("globs match files without dot files and without following links out", async () => {
    const entries = await collectLocalArtifacts(cwd, ["**/*.json"], opts);
    const byPath = Object.fromEntries(entries.map((e) => [e.path, e]));
    expect(Object.keys(byPath)).toEqual([
      "bad.json",
      "big.json",
      "dangling.json",
      "escape.json",
      "latest.json",
      "metrics.json",
      "out/a.json",
    ]);
    expect(byPath["escape.json"]).toMatchObject({
      exists: false,
      reason: expect.stringContaining("symbolic link"),
    });
    expect(byPath["dangling.json"]).toMatchObject({ exists: false, reason: "broken symbolic link" });
    expect(byPath["latest.json"]).toMatchObject({
      exists: true,
      content: { loss: 0.25, token: "hunter2hunter2" },
    });
  });

  test("glob character classes and single-character wildcards", async () => {
    const entries = await collectLocalArtifacts(cwd, ["[bm]*.json", "notes.tx?"], opts);
    expect(entries.map((e) => e.path)).toEqual(["bad.json", "big.json", "metrics.json", "notes.txt"]);
  });

  test("a glob matching nothing is one missing entry", async () => {
    expect(await collectLocalArtifacts(cwd, ["*.parquet"], opts)).toEqual([
      {
        path: "*.parquet",
        declared_path: "*.parquet",
        exists: false,
        remote: false,
        reason: "no file matches this pattern",
      },
    ]);
  });

  test("a missing path is one missing entry", async () => {
    const [e] = await collectLocalArtifacts(cwd, ["results/final.json"], opts);
    expect(e).toEqual({
      path: "results/final.json",
      declared_path: "results/final.json",
      exists: false,
      remote: false,
      reason: "no such file or directory",
    });
  });

  test("'..' escapes are refused without reading", async () => {
    const entries = await collectLocalArtifacts(
      cwd,
      ["../outside/secret.json", "out/../../outside/*.json"],
      opts,
    );
    expect(entries).toHaveLength(2);
    for (const e of entries) {
      expect(e.exists).toBe(false);
      expect(e.reason).toContain("'..'");
      expect(e.sha256).toBeUndefined();
    }
  });

  test("'..' that stays inside is fine", async () => {
    const [e] = await collectLocalArtifacts(cwd, ["out/../notes.txt"], opts);
    expect(e).toMatchObject({ path: "notes.txt", exists: true });
  });

  test("symbolic links out of cwd are refused, for files and through directories", async () => {
    const entries = await collectLocalArtifacts(
      cwd,
      ["escape.json", "outdir/secret.json", "outdir", "outdir/*.json"],
      opts,
    );
    expect(entries).toHaveLength(4);
    for (const e of entries) {
      expect(e).toMatchObject({ exists: false, reason: expect.stringContaining("symbolic link") });
      expect(e.content).toBeUndefined();
    }
  });

  test("absolute paths are allowed inside cwd only", async () => {
    const entries = await collectLocalArtifacts(
      cwd,
      [join(cwd, "notes.txt"), join(outside, "secret.json")],
      opts,
    );
    // Sorted by path: the refused absolute path sorts before "notes.txt".
    expect(entries.map((e) => [e.path, e.exists])).toEqual([
      [join(outside, "secret.json"), false],
      ["notes.txt", true],
    ]);
    expect(entries[0]?.reason).toContain("outside");
  });

  test("a cwd reached through a symbolic link still confines correctly", async () => {
    const linkedCwd = join(base, "cwd-link");
    symlinkSync(cwd, linkedCwd);
    const entries = await collectLocalArtifacts(linkedCwd, ["notes.txt", "escape.json"], opts);
    expect(entries.map((e) => [e.path, e.exists])).toEqual([
      ["escape.json", false],
      ["notes.txt", true],
    ]);
  });

  test("output is sorted by path across declarations, duplicates kept per declaration", async () => {
    const entries = await collectLocalArtifacts(cwd, ["notes.txt", "*.txt", "bad.json"], opts);
    expect(entries.map((e) => `${e.path}<${e.declared_path}`)).toEqual([
      "bad.json<bad.json",
      "notes.txt<*.txt",
      "notes.txt<notes.txt",
    ]);
  });

  test("a missing cwd reports every declaration as missing", async () => {
    const entries = await collectLocalArtifacts(join(base, "no-such-dir"), ["a.json", "b"], opts);
    expect(entries.map((e) => [e.path, e.exists])).toEqual([
      ["a.json", false],
      ["b", false],
    ]);
    expect(entries[0]?.reason).toContain("working directory");
  });

  test("a FIFO is reported as not a regular file and never opened", async () => {
    const fifo = join(cwd, "pipe.json");
    const made = Bun.spawnSync(["mkfifo", fifo]);
    expect(made.exitCode).toBe(0);
    try {
      const [e] = await collectLocalArtifacts(cwd, ["pipe.json"], opts);
      expect(e).toMatchObject({ path: "pipe.json", exists: false, reason: "not a regular file; not read" });
    } finally {
      rmSync(fifo);
    }
  });

  // Root reads any file regardless of mode, so there is nothing to observe as root.
  test.skipIf(process.getuid?.() === 0)("an unreadable file is reported with a reason", async () => {
    write("locked.txt", "x");
    chmodSync(join(cwd, "locked.txt"), 0o000);
    const [e] = await collectLocalArtifacts(cwd, ["locked.txt"], opts);
    expect(e).toMatchObject({
      exists: true,
      size_bytes: 1,
      reason: expect.stringContaining("cannot be read"),
    });
  });
});
