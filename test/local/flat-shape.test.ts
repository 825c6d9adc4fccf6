// The flat wait answer through the binary: Awaitless 0.8's jq uses on run/wait --json, waited_seconds, the snapshot.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ENVELOPE_FIELDS } from "../../src/core/model/service-api.ts";
import { canonicalJson } from "../../src/core/results/canonical-json.ts";
import { BINARY, gatedCommand, Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

/** The envelope fields docs/protocol.md ("Waiting and delivery") names: beside the result, outside its hash. */
const ENVELOPE: readonly string[] = ENVELOPE_FIELDS;

/** `awaitless ARGS | jq FILTER` through a real pipe, as the 0.8 README's scripts do. */
function jq(args: string[], filter: string): string {
  const r = Bun.spawnSync(["sh", "-c", '"$0" "$@" | jq -c "$FILTER"', BINARY, ...args], {
    cwd: sb.work,
    env: { ...sb.env, FILTER: filter },
    stdout: "pipe",
    stderr: "pipe",
  });
  return r.stdout.toString().trim();
}

// The 0.8 README's example: a benchmark writing its declared JSON artifact.
const BENCH = [
  "sh",
  "-c",
  'mkdir -p results && printf \'{"correctness": true, "latency_us": 24.7}\' > results/benchmark.json && echo bench done',
];

/** The terminal result inside a flat answer: the answer without the envelope. */
function resultPart(answer: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(answer).filter(([k]) => !ENVELOPE.includes(k)));
}

function sha256Of(result: Record<string, unknown>): string {
  const { snapshot: _s, ...body } = result;
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

/** A job that prints `started`, then waits for GATE to exist, then prints `done`. */
function gatedJob(name: string): { id: string; gate: string } {
  const gate = join(sb.root, `gate-${name}`);
  const id = sb.submit(gatedCommand(gate, "echo started", "echo done"), [
    "--artifact",
    "results/benchmark.json",
  ]);
  return { id, gate };
}

describe("0.8's jq uses work on the flat answer", () => {
  test("run --json: .exit_code, .state, .stdout_tail, .parsed_results.<key>", () => {
    const args = ["run", "--json", "--artifact", "results/benchmark.json", "--", ...BENCH];
    expect(jq(args, ".exit_code")).toBe("0");
    expect(jq(args, ".state")).toBe('"succeeded"');
    expect(jq(args, ".stdout_tail")).toBe('"bench done\\n"');
    expect(jq(args, ".parsed_results.correctness")).toBe("true");
    expect(jq(args, ".parsed_results.latency_us")).toBe("24.7");
    expect(jq(args, ".truncated")).toBe("false");
    expect(jq(args, "[.delivery, .wait_state, .delivery_state]")).toBe('["inline","complete","delivered"]');
    expect(jq(args, 'has("result")')).toBe("false");
  });

  test("wait --json: the same fields for a job submitted earlier", () => {
    const id = sb.submit(BENCH, ["--artifact", "results/benchmark.json"]);
    expect(jq(["wait", id, "--json"], ".exit_code")).toBe("0");
    expect(jq(["wait", id, "--json"], ".state")).toBe('"succeeded"');
    expect(jq(["wait", id, "--json"], ".stdout_tail")).toBe('"bench done\\n"');
    expect(jq(["wait", id, "--json"], ".parsed_results")).toBe('{"correctness":true,"latency_us":24.7}');
    expect(jq(["wait", id, "--json"], ".job_state")).toBe('"succeeded"');
  });

  test("a failure reads the same way: .exit_code and .state", () => {
    const args = ["run", "--json", "--", "sh", "-c", "echo oops >&2; exit 9"];
    expect(jq(args, "[.exit_code, .state, .stderr_tail]")).toBe('[9,"failed","oops\\n"]');
  });

  test("submit --json carries the backend, as 0.8's did", () => {
    const r = sb.run(["submit", "--json", "--", "true"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ state: expect.any(String), backend: "local" });
    expect(r.json.job_id).toMatch(/^job_/);
  });
});

describe("while pending, and across re-waits", () => {
  test("a pending wait has the result fields known so far; waited_seconds grows over two waits", () => {
    const { id, gate } = gatedJob("pending");
    try {
      const first = sb.run(["wait", "--json", "--timeout", "1s", id]);
      expect(first.code).toBe(4);
      expect(first.json).toMatchObject({
        job_id: id,
        state: "running",
        job_state: "running",
        wait_state: "client_timeout",
        delivery_state: "pending",
        backend: "local",
        stdout_tail: "started\n",
        next_command: `awaitless wait ${id}`,
      });
      // not known yet: absent, not null
      for (const key of ["exit_code", "finished_at", "parsed_results", "snapshot", "artifacts", "digest"])
        expect(first.json).not.toHaveProperty(key);
      expect(first.json.waited_seconds).toBeGreaterThan(0);
      expect(jq(["wait", "--json", "--timeout", "1s", id], ".stdout_tail")).toBe('"started\\n"');
      const third = sb.run(["wait", "--json", "--timeout", "1s", id]);
      expect(third.json.delivery_state).toBe("pending");
      expect(third.json.waited_seconds).toBeGreaterThan(first.json.waited_seconds);
      writeFileSync(gate, "");
      const done = sb.run(["wait", "--json", id]);
      expect(done.code).toBe(0);
      expect(done.json.stdout_tail).toBe("started\ndone\n");
      expect(done.json.waited_seconds).toBeGreaterThanOrEqual(third.json.waited_seconds);
      // the envelope (waited_seconds included) is outside the snapshot's hash
      expect(done.json.snapshot.sha256).toBe(sha256Of(resultPart(done.json)));
    } finally {
      if (!existsSync(gate)) writeFileSync(gate, "");
    }
  });

  test("replays are byte-identical, run's envelope differs from wait's, the snapshot is the same", () => {
    const r = sb.run(["run", "--json", "--artifact", "results/benchmark.json", "--", ...BENCH]);
    const id = r.json.job_id as string;
    const a = sb.run(["wait", "--json", id]).stdout;
    const b = sb.run(["wait", "--json", id]).stdout;
    expect(b).toBe(a);
    const wait = JSON.parse(a);
    expect(wait).not.toHaveProperty("delivery");
    expect(r.json.delivery).toBe("inline");
    expect(resultPart(r.json)).toEqual(resultPart(wait));
    expect(wait.snapshot).toEqual(r.json.snapshot);
    expect(wait.snapshot.sha256).toBe(sha256Of(resultPart(wait)));
    // the answer begins with the stored result's bytes (inspect shows the stored result)
    const stored = JSON.stringify(sb.run(["inspect", "--json", id]).json.result);
    expect(a.startsWith(stored.slice(0, -1))).toBe(true);
    expect(stored).toBe(JSON.stringify(resultPart(wait)));
  });

  test("a completion item's result is the terminal result itself (no envelope)", () => {
    const id = sb.submit(BENCH, ["--artifact", "results/benchmark.json"]);
    const wait = sb.run(["wait", "--json", id]).json;
    const page = sb.run(["completions", "--json", id]).json;
    expect(page.completions[0].result).toEqual(resultPart(wait));
    expect(page.completions[0].result.parsed_results.correctness).toBe(true);
  });
});

describe("result tails honour log_tail_lines, then max_return_bytes", () => {
  test("the last log_tail_lines lines of a long log; byte counts describe the whole log", () => {
    const own = new Sandbox();
    try {
      own.writeConfig("[defaults]\nlog_tail_lines = 10\nmax_return_bytes = 65536\n");
      const r = own.run(["run", "--json", "--", "sh", "-c", "seq 1 5000; seq 1 300 >&2"]);
      expect(r.code).toBe(0);
      expect(r.json.stdout_tail).toBe(`${Array.from({ length: 10 }, (_, i) => 4991 + i).join("\n")}\n`);
      expect(r.json.stderr_tail.split("\n").filter(Boolean)).toHaveLength(10);
      expect(r.json.stderr_tail.endsWith("300\n")).toBe(true);
      expect(r.json.truncated).toBe(true);
      expect(r.json.stdout_bytes).toBeGreaterThan(20_000);
      // the byte budget still cuts lines that are longer than it
      own.writeConfig("[defaults]\nlog_tail_lines = 10\nmax_return_bytes = 100\n");
      const cut = own.run([
        "run",
        "--json",
        "--",
        "sh",
        "-c",
        "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -n 50",
      ]);
      expect(Buffer.byteLength(cut.json.stdout_tail)).toBeLessThanOrEqual(100);
      expect(cut.json.stdout_tail.endsWith("xyz\n")).toBe(true);
      expect(cut.json.truncated).toBe(true);
    } finally {
      own.cleanup();
    }
  });

  test("a log shorter than log_tail_lines is whole and not truncated", () => {
    const r = sb.run(["run", "--json", "--", "sh", "-c", "seq 1 20"]);
    expect(r.json.stdout_tail.split("\n").filter(Boolean)).toHaveLength(20);
    expect(r.json.truncated).toBe(false);
  });
});
