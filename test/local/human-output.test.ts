// Human output shows the result, through the binary as a person reads it: parsed JSON artifacts (bounded) in `wait`
// and `status`, a marker inside `logs > file` where lines were left out and `--all` for everything, a dependency
// failure naming its parent, every attempt of a retried job, no repeated reason, no empty section header.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

function finished(argv: string[], flags: string[] = []): string {
  const id = sb.submit(argv, flags);
  sb.run(["wait", id]);
  return id;
}

describe("results", () => {
  test("wait and status show a parsed JSON artifact's value; a big one is cut with the way to all of it", () => {
    const big = `{"label":"sweep","points":[${Array.from({ length: 300 }, (_, i) => i).join(",")}],"runs":[${Array.from({ length: 30 }, (_, i) => `{"run":${i},"ok":true}`).join(",")}]}`;
    const id = finished(
      ["sh", "-c", `echo '{"latency_us": 42, "correct": true}' > small.json; echo '${big}' > big.json`],
      ["--artifact", "small.json", "--artifact", "big.json"],
    );
    const w = sb.run(["wait", id]).stdout;
    expect(w).toMatch(
      /artifact small\.json: \d+ B, sha256 [0-9a-f]{12}…, parsed:\n {2}\{"correct":true,"latency_us":42\}\n/,
    );
    const lines = w.split("\n");
    const at = lines.findIndex((l) => l.startsWith("artifact big.json"));
    // a list of plain values on one line, cut; the value at most 20 lines, then how to read all of it
    expect(lines[at + 1]).toBe("  {");
    expect(lines[at + 2]).toBe('    "label": "sweep",');
    expect(lines[at + 3]).toMatch(/^ {4}"points": \[0,1,2,3,.*… \(300 items\),$/);
    expect(lines[at + 4]).toBe('    "runs": [');
    expect(lines[at + 5]).toBe('      {"ok":true,"run":0},');
    expect(lines[at + 21]).toMatch(
      new RegExp(
        `^ {2}… \\d+ more lines: awaitless wait ${id} --json \\| jq '\\.artifacts\\[0\\]\\.content'$`,
      ),
    );
    expect(lines.slice(at + 1, at + 21).every((l) => l.length <= 120)).toBe(true);
    const st = sb.run(["status", id]).stdout;
    expect(st).toContain('  {"correct":true,"latency_us":42}');
    expect(st).toContain("artifact big.json:");
  });

  test("a dependency failure names its parent; a cancelled job does not say `cancelled` twice", () => {
    const parent = finished(["false"]);
    const child = sb.submit(["true"], ["--after", parent]);
    const w = sb.run(["wait", child]);
    expect(w.code).toBe(5);
    expect(w.stdout.split("\n")[0]).toBe(
      `${child} cancelled before its command started — ${parent} did not succeed, so this job (after ${parent}:ok) never ran`,
    );
    expect(sb.run(["status", child]).stdout).toMatch(
      new RegExp(`reason\\s+dependency_failed: ${parent} did not succeed`),
    );
    const sleeper = sb.submit(["sleep", "30"]);
    sb.run(["cancel", "--grace-period", "1s", sleeper]);
    const c = sb.run(["wait", sleeper]).stdout.split("\n")[0]!;
    expect(c).toMatch(new RegExp(`^${sleeper} cancelled after \\S+ \\(exit 143, signal TERM\\)$`));
  });

  test("a retried job shows every attempt: how each ended, how long it ran, and the whole span", () => {
    const id = finished(
      ["sh", "-c", "sleep 0.3; exit 1"],
      ["--retries", "2", "--retry-on", "exit", "--retry-backoff", "0.1s"],
    );
    const w = sb.run(["wait", id]).stdout;
    expect(w).toMatch(
      /\nattempt 3 of 3; earlier: 1 failed after 0\.\ds \(exit 1\), 2 failed after 0\.\ds \(exit 1\); \S+ from the first start to the end\n/,
    );
    expect(sb.run(["status", id]).stdout).toMatch(/attempt\s+3 of 3; earlier: 1 failed after/);
  });

  test("no section header over an empty stream", () => {
    const blank = finished(["sh", "-c", "echo out; printf '\\n\\n' >&2"]);
    expect(sb.run(["wait", blank]).stdout).not.toContain("── stderr");
    const quiet = finished(["sh", "-c", "echo only-out"]);
    const logs = sb.run(["logs", quiet]).stdout;
    expect(logs).toBe("── stdout ──\nonly-out\n");
  });
});

describe("logs", () => {
  const id = finished(["sh", "-c", "seq -f 'line %g of a build log that is long enough to be cut' 1 50001"]);

  test("logs > file of a 50,001-line log: the marker is in the file, --all and the raw file hold every line", () => {
    const file = join(sb.root, "build.log");
    const r = Bun.spawnSync(["sh", "-c", `"$0" logs "$1" > "$2"`, BINARY, id, file], {
      cwd: sb.work,
      env: sb.env,
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(0);
    const got = readFileSync(file, "utf8").split("\n");
    expect(got[0]).toBe("── stdout ──");
    const marker = got[1]!.match(
      /^\[… lines 1–(\d+) left out: (.+ logs job_\S+ --all) prints all of it; the raw file: (\S+)\]$/,
    );
    expect(marker).not.toBeNull();
    expect(got[2]).toBe(`line ${Number(marker![1]) + 1} of a build log that is long enough to be cut`);
    expect(got.at(-2)).toBe("line 50001 of a build log that is long enough to be cut");
    // the marker's command, as printed, gives everything
    const all = Bun.spawnSync(["sh", "-c", marker![2]!], { cwd: sb.work, env: sb.env, stdout: "pipe" });
    const allLines = all.stdout.toString().split("\n");
    expect(allLines.length).toBe(50_003); // header, 50,001 lines, the final newline
    expect(allLines[1]).toBe("line 1 of a build log that is long enough to be cut");
    expect(allLines[50_001]).toBe("line 50001 of a build log that is long enough to be cut");
    expect(readFileSync(marker![3]!, "utf8").split("\n").length).toBe(50_002);
    // the notes for a person stay on stderr
    expect(r.stderr.toString()).toContain(`earlier: awaitless logs ${id} --lines :${marker![1]}`);
  });

  test("a forward read marks what follows; --head/--tail N get no marker; --all refuses --head; -i", () => {
    const forward = sb.run(["logs", id, "--lines", "2:", "--stream", "stdout"]).stdout.split("\n");
    expect(forward[0]).toBe("line 2 of a build log that is long enough to be cut");
    expect(forward.at(-2)).toMatch(
      /^\[… lines from \d+ on left out: .* --stream stdout --lines 2: --all prints all of it; the raw file: /,
    );
    // what --head or --tail leaves out was not asked for: no marker (stderr still says how to read on)
    const head = sb.run(["logs", id, "--head", "2", "--stream", "stdout"]);
    expect(head.stdout.split("\n").length).toBe(3);
    expect(head.stderr).toContain("further:");
    const bad = sb.run(["logs", id, "--all", "--head", "2"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--all prints every line; it does not combine with --head");
    const i = sb.run(["logs", id, "--stream", "stdout", "--grep", "LINE 4999[89] OF", "-i"]);
    expect(i.stdout).toBe(
      "49998:line 49998 of a build log that is long enough to be cut\n49999:line 49999 of a build log that is long enough to be cut\n",
    );
    const exact = sb.run(["logs", id, "--stream", "stdout", "--grep", "LINE 4999[89] OF"]);
    expect(exact.stdout).toContain('(no stdout line matches "LINE 4999[89] OF" in the whole log)');
    const noGrep = sb.run(["logs", id, "-i"]);
    expect(noGrep.code).toBe(2);
    expect(noGrep.stderr).toContain("-i (--ignore-case) applies to --grep");
  });
});
