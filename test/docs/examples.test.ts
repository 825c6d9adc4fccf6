// Docs are tested: every shell example in the user docs runs through the compiled binary, as printed.
//
// Conventions (also in docs/architecture.md, "Docs are tested"):
// - Each fenced block tagged sh, bash, shell or console in DOCS is an example. It runs unless the line
//   before it (blank lines allowed) is `<!-- example: skip (REASON) -->`; skipped blocks are printed with
//   their reasons. An untagged fence fails: tag it `sh` (an example) or `text` (a synopsis or output).
// - A block runs in bash with `set -e -o pipefail` (a console block: its `$ ` lines), in a fresh Sandbox
//   (private HOME, data dir and config), stdin /dev/null, a time limit of BLOCK_TIMEOUT_MS, and
//   `awaitless` on PATH as a symlink to dist/awaitless. Every line must succeed.
// - Placeholders: `job_01JD…` (any `job_…` ending in `…`) is the newest job of the sandbox when that line
//   runs; `job_A`, `job_B`, … are its first, second, … jobs (oldest first). `--last` works as it is.
//   A placeholder met before the block started any job stands for a stand-in job (`./bench.sh`).
// - `jq` (the machine's; CI installs it) fails when it prints `null`: `| jq .field` must name a field
//   the answer has. `./bench.sh` writes `results/benchmark.json` (`{"latency_us": 42, "correct": true}`).
// - Stand-ins in the working directory: `./dist/awaitless` (the binary), `./install.sh` (this checkout's), `./bench.sh`, `./train.sh`,
//   a Makefile with `test`, `train.py` and `eval.py` (each prints its arguments and exits 0); `python` and
//   `make` on PATH (the machine's, else stand-ins); an Awaitless 0.8 store (test/fixtures/awaitless-08) in `~/old-awaitless-data`.
// - Every job a block started must end without failing (failed, timed_out, lost; imported 0.8 jobs aside);
//   jobs still active 30 s after the block are cancelled, and the block's process group is killed.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ROOT, Sandbox } from "../helpers/cli.ts";
import { cancelActive, found, jqShim, linkTools, PRELUDE, standIns, substitute } from "./example-sandbox.ts";
import { type Block, commandsOf, fencedBlocks, SHELL_LANGS } from "./markdown-blocks.ts";

const DOCS = [
  "README.md",
  "docs/getting-started.md",
  "docs/cli.md",
  "docs/queues.md",
  "docs/migrating.md",
  "docs/install.md",
];
const BLOCK_TIMEOUT_MS = 60_000;

const blocks: Block[] = DOCS.flatMap((f) => fencedBlocks(f, readFileSync(join(ROOT, f), "utf8")));
const examples = blocks.filter((b) => SHELL_LANGS.has(b.lang));
const where = (b: Block) => `${b.file}:${b.line}`;

afterAll(() => {
  const skipped = examples.filter((b) => b.skip);
  const lines = skipped.map((b) => `  ${where(b)}: ${b.skip}`);
  console.log(
    `doc examples: ${examples.length - skipped.length} run, ${skipped.length} skipped${lines.length ? ":" : ""}\n${lines.join("\n")}`,
  );
});

describe("doc blocks", () => {
  test("every fence is tagged and every marker is a readable skip before a shell example", () => {
    const untagged = blocks
      .filter((b) => b.lang === "")
      .map((b) => `${where(b)}: untagged fence: tag it sh (an example) or text (a synopsis or output)`);
    const bad = blocks.filter((b) => b.problem).map((b) => `${where(b)}: ${b.problem}`);
    expect([...untagged, ...bad]).toEqual([]);
  });

  test("markers and placeholders are read as the conventions above say", () => {
    const md = [
      "<!-- example: skip (needs an SSH host) -->",
      "",
      "```sh",
      "awaitless submit --host gpu -- true",
      "```",
      "<!-- example: skip -->",
      "```bash",
      "true",
      "```",
      "<!-- example: skip (output) -->",
      "```text",
      "x",
      "```",
      "```console",
      "$ awaitless status job_01JD…",
      "job_01JD… succeeded",
      "```",
      "```",
      "awaitless wait JOB_ID",
      "```",
    ].join("\n");
    const [ssh, noReason, text, consoleBlock, untagged] = fencedBlocks("x.md", md);
    expect([ssh!.skip, ssh!.line, ssh!.problem]).toEqual(["needs an SSH host", 3, undefined]);
    expect(noReason!.problem).toContain("unreadable marker");
    expect(text!.problem).toContain("before a `text` block");
    expect(substitute(commandsOf(consoleBlock!))).toBe('awaitless status "$(awl_job last)"');
    expect(untagged!.lang).toBe("");
    expect(substitute("awaitless completions job_A job_B job_AB")).toBe(
      'awaitless completions "$(awl_job 1)" "$(awl_job 2)" job_AB',
    );
  });

  test("each of the files has a shell example that runs", () => {
    for (const f of DOCS) expect(examples.some((b) => b.file === f && !b.skip)).toBe(true);
  });
});

describe("doc examples", () => {
  for (const b of examples) {
    const name = `${where(b)}: ${firstLine(b)}`;
    // Marked skips are by design, not a missing service: listed by afterAll, not counted as bun skips.
    if (!b.skip) test(name, () => runExample(b), BLOCK_TIMEOUT_MS + 30_000);
  }
});

function firstLine(b: Block): string {
  const l =
    commandsOf(b)
      .split("\n")
      .find((x) => x.trim() !== "") ?? "";
  return l.length > 60 ? `${l.slice(0, 59)}…` : l;
}

async function runExample(b: Block): Promise<void> {
  const sb = new Sandbox();
  try {
    const bin = join(sb.root, "bin");
    mkdirSync(bin);
    symlinkSync(BINARY, join(bin, "awaitless"));
    linkTools(bin);
    jqShim(bin);
    needTools(b);
    standIns(sb);
    const script = join(sb.root, "example.sh");
    writeFileSync(script, `${PRELUDE}\n${substitute(commandsOf(b))}\n`);
    const p = Bun.spawn(["bash", script], {
      detached: true, // its own process group, killed whole by its PID
      cwd: sb.work,
      env: { ...sb.env, PATH: `${bin}:${sb.env.PATH}` },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(p.pid);
    }, BLOCK_TIMEOUT_MS);
    const [out, err, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    clearTimeout(timer);
    killGroup(p.pid);
    const failedJobs = code === 0 && !timedOut ? jobsThatFailed(sb) : [];
    cancelActive(sb);
    const report = `${where(b)} exited ${code}${timedOut ? ` (killed after ${BLOCK_TIMEOUT_MS} ms)` : ""}\n--- block\n${b.body}\n--- stdout\n${tail(out)}\n--- stderr (commands traced with +)\n${tail(err)}`;
    if (process.env.AWL_DOCS_SHOW) console.log(report);
    if (code !== 0 || timedOut) throw new Error(report);
    if (failedJobs.length)
      throw new Error(`jobs the example started did not succeed:\n${failedJobs.join("\n")}\n${report}`);
    expect(code).toBe(0);
  } finally {
    sb.cleanup();
  }
}

/** The jobs this block started (not imported 0.8 ones) that failed, timed out or were lost, once ended. */
function jobsThatFailed(sb: Sandbox): string[] {
  const ours = (sb.run(["list", "--json", "--limit", "10000"]).json?.jobs ?? []).filter(
    (j: { job_id: string }) => !/^job_[0-9A-F]{22}$/.test(j.job_id),
  );
  const bad: string[] = [];
  for (const j of ours) {
    const w = sb.run(["wait", j.job_id, "--timeout", "30s", "--json"]);
    const s = sb.status(j.job_id);
    if (["failed", "timed_out", "lost"].includes(s.state)) {
      const log = sb.run(["logs", j.job_id, "--tail", "5"]).stdout;
      bad.push(
        `${j.job_id} ${s.state} (wait exited ${w.code}): ${JSON.stringify(s.spec?.argv ?? s.argv ?? "")}\n${log}`,
      );
    }
  }
  return bad;
}

/** A tool an example pipes into that this machine lacks is named, with how to get it. */
function needTools(b: Block): void {
  for (const tool of ["jq"]) {
    if (new RegExp(`\\|\\s*${tool}\\b`).test(b.body) && !found(["sh", "-c", `command -v ${tool}`])) {
      throw new Error(`${where(b)} pipes into ${tool}, which is not installed (apt-get install ${tool})`);
    }
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group is gone
  }
}

function tail(s: string, max = 4000): string {
  return s.length > max ? `…${s.slice(-max)}` : s;
}
