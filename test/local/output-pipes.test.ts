// Through the compiled binary: every byte of stdout/stderr reaches a slow reader, blocking or non-blocking pipe; `| head` ends quietly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, constants, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { BINARY, killQuietly, Sandbox } from "../helpers/cli.ts";

const MIB = 1024 * 1024;
const sb = new Sandbox();
// The largest return budget, so a result, a log and an inspect carry the whole 8 MiB.
sb.writeConfig("[defaults]\nmax_return_bytes = 10485760\nlog_tail_lines = 1000000\n");
afterAll(() => sb.cleanup());

/** How long the slow reader leaves the pipe full before its first read: the behaviour under test, not a wait. */
const READER_PAUSE_S = 0.3;

interface Piped {
  code: number;
  bytes: Buffer;
  /** What the other stream (the one not under test) carried. */
  other: string;
}

let seq = 0;
const files = () => {
  seq += 1;
  const base = join(sb.root, `out-${seq}`);
  return { out: `${base}.out`, other: `${base}.other`, rc: `${base}.rc` };
};

function sh(script: string, args: string[]): void {
  const r = Bun.spawnSync(["sh", "-c", script, BINARY, ...args], { cwd: sb.work, env: sb.env });
  if (r.exitCode !== 0) throw new Error(`sh failed (${r.exitCode}): ${r.stderr.toString()}`);
}

const result = (f: ReturnType<typeof files>): Piped => ({
  code: Number(readFileSync(f.rc, "utf8").trim()),
  bytes: readFileSync(f.out),
  other: readFileSync(f.other, "utf8"),
});

/** The command with `stream` going straight to a file: what the reader must get. */
function toFile(args: string[], stream: "stdout" | "stderr" = "stdout"): Piped {
  const f = files();
  const redirect = stream === "stdout" ? `>"$OUT" 2>"$OTHER"` : `2>"$OUT" >"$OTHER"`;
  sh(`OUT='${f.out}' OTHER='${f.other}'; "$0" "$@" ${redirect}; echo $? > '${f.rc}'`, args);
  return result(f);
}

/** The command with `stream` into a real shell pipe whose reader sleeps before it reads. */
function toSlowPipe(args: string[], stream: "stdout" | "stderr" = "stdout"): Piped {
  const f = files();
  const redirect = stream === "stdout" ? `2>'${f.other}'` : `2>&1 >'${f.other}'`;
  sh(
    `{ "$0" "$@" ${redirect}; echo $? > '${f.rc}'; } | { sleep ${READER_PAUSE_S}; cat > '${f.out}'; }`,
    args,
  );
  return result(f);
}

/** The command with stdout on a NON-blocking pipe (a FIFO opened O_NONBLOCK), read after a pause. */
async function toNonBlockingPipe(args: string[]): Promise<Piped> {
  const fifo = join(sb.root, `fifo-${++seq}`);
  Bun.spawnSync(["mkfifo", fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  const child = Bun.spawn([BINARY, ...args], { cwd: sb.work, env: sb.env, stdout: writer, stderr: "pipe" });
  closeSync(writer);
  const chunks: Buffer[] = [];
  try {
    await Bun.sleep(READER_PAUSE_S * 1000);
    const buf = Buffer.alloc(MIB);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error("the writer never closed the FIFO");
      let n: number;
      try {
        n = readSync(reader, buf);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
        await Bun.sleep(2);
        continue;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    const [code, other] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    return { code, bytes: Buffer.concat(chunks), other };
  } finally {
    killQuietly(child.pid);
    closeSync(reader);
  }
}

function submitFinished(argv: string[]): string {
  const id = sb.submit(argv);
  const w = sb.run(["wait", "--json", id]);
  if (w.code !== 0) throw new Error(`job ${id} did not succeed: ${w.stderr}`);
  return id;
}

const printing = (bytes: number) => [
  "sh",
  "-c",
  `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${bytes}`,
];
const jobs: Record<string, string> = {};

beforeAll(() => {
  jobs["1 MiB"] = submitFinished(printing(MIB));
  jobs["8 MiB"] = submitFinished(printing(8 * MIB));
  // list --json over many jobs: each carries a ~96 KiB argument, so 90 of them list to more than 8 MiB.
  const bulky = "a".repeat(96 * 1024);
  for (let i = 0; i < 90; i++) sb.submit(["true", `${i}`, bulky]);
}, 120_000);

function expectWhole(piped: Piped, file: Piped, atLeast: number, json: boolean): void {
  // stderr carries only what `logs` says it left out (the same whatever reads stdout), never an error.
  expect(piped.other).toBe(file.other);
  expect(piped.other).not.toContain("error");
  expect(piped.code).toBe(file.code);
  expect(piped.bytes.length).toBeGreaterThanOrEqual(atLeast);
  expect(piped.bytes.length).toBe(file.bytes.length);
  expect(piped.bytes.equals(file.bytes)).toBe(true);
  if (json) expect(() => JSON.parse(piped.bytes.toString())).not.toThrow();
}

describe("stdout reaches a slow reader whole", () => {
  for (const size of ["1 MiB", "8 MiB"] as const) {
    const bytes = size === "1 MiB" ? MIB : 8 * MIB;
    // `logs` answers a bounded window (how much is the log reader's business): still far past a pipe's 64 KiB.
    const window = Math.min(bytes, 512 * 1024);
    const cases: [string, () => string[], number, boolean][] = [
      ["wait --json", () => ["wait", "--json", jobs[size]!], bytes, true],
      ["logs", () => ["logs", jobs[size]!], window, false],
      ["logs --json", () => ["logs", "--json", jobs[size]!], window, true],
      ["inspect --json", () => ["inspect", "--json", jobs[size]!], bytes, true],
      ["list --json", () => ["list", "--json", "--limit", size === "1 MiB" ? "11" : "90"], bytes, true],
    ];
    for (const [name, args, atLeast, json] of cases) {
      test(`${name}, ${size}`, () => {
        const file = toFile(args());
        expect(file.code).toBe(0);
        expectWhole(toSlowPipe(args()), file, atLeast, json);
      }, 60_000);
    }
  }

  test("wait --json, 8 MiB, into a non-blocking pipe", async () => {
    const args = ["wait", "--json", jobs["8 MiB"]!];
    expectWhole(await toNonBlockingPipe(args), toFile(args), 8 * MIB, true);
  }, 60_000);
});

test("stderr reaches a slow reader whole, and a 120 KiB bad word is echoed bounded", () => {
  // The error names the unknown command; an echo of what someone typed is bounded (its start and end kept), and
  // what is written reaches a slow reader exactly as it reaches a file.
  const args = [`no-such-command-${"x".repeat(120 * 1024)}-end`];
  const file = toFile(args, "stderr");
  expect(file.code).toBe(2);
  const text = file.bytes.toString();
  expect(text).toContain("no-such-command-xxx");
  expect(text).toContain("xxx-end");
  expect(file.bytes.length).toBeLessThan(16 * 1024);
  expectWhole(toSlowPipe(args, "stderr"), file, file.bytes.length, false);
}, 60_000);

describe("a reader that goes away", () => {
  for (const [name, args, reader] of [
    ["logs | head -1", () => ["logs", jobs["8 MiB"]!], "head -1"],
    ["wait --json | head -c 100", () => ["wait", "--json", jobs["8 MiB"]!], "head -c 100"],
  ] as const) {
    test(`${name}: status 141 and nothing on stderr`, () => {
      const f = files();
      sh(`{ "$0" "$@" 2>'${f.other}'; echo $? > '${f.rc}'; } | ${reader} > '${f.out}'`, args());
      const r = result(f);
      expect(r.other).toBe("");
      expect(r.code).toBe(141);
      expect(r.bytes.length).toBeGreaterThan(0);
    }, 60_000);
  }
});
