// The compiled `awaitless mcp` keeps its answers bounded and its input honest: list_jobs with long commands stays
// under its budget and says what it left out; a 1 MB bad value is not echoed whole; text that is not UTF-8 or holds
// a lone surrogate is refused by the argument's name (never stored as U+FFFD); a line that is not JSON gets -32700.
// Over the official client where it can send the input, over raw stdio bytes where it cannot.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LIST_ANSWER_BYTES } from "../../src/mcp/list-bounds.ts";
import { structured, textOf } from "./harness.ts";
import { seedFinishedJobs } from "./seed-jobs.ts";
import { BINARY, connectStdio, makeSandbox, requireBinary } from "./stdio-client.ts";

const box = makeSandbox();
const sessions: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of sessions) await s.close();
  box.remove();
});
async function connect() {
  const conn = await connectStdio("modern", box.env, box.root);
  sessions.push(conn);
  return conn;
}
const size = (x: unknown) => Buffer.byteLength(JSON.stringify(x));

/** 300 finished jobs, each with a 20 KB command, written straight into the store (no processes). */
const LONG = 300;
beforeAll(() => {
  seedFinishedJobs(box.env.AWAITLESS_DATA_DIR!, box.root, LONG, (i) => [
    "printf",
    "%s",
    `${i}:${"a".repeat(20_000)}`,
    "tail-marker",
  ]);
});

describe("list_jobs", () => {
  test("300 jobs with 20 KB commands: the answer stays under its budget, says what it cut and how to get it", async () => {
    const { client } = await connect();
    const r = await client.callTool({ name: "list_jobs", arguments: { limit: 1000 } });
    expect(r.isError).toBeFalsy();
    // 300 rows of 20 KB each were 6 MB before
    expect(size(r.content) + size(r.structuredContent)).toBeLessThanOrEqual(LIST_ANSWER_BYTES);
    const s = structured<{
      jobs: { job_id: string; argv: string[]; cut_fields?: string[] }[];
      count: number;
      left_out: { jobs?: number; rows_cut: number; why: string; next: string };
    }>(r);
    expect(s.count).toBe(s.jobs.length);
    expect(s.jobs.length + (s.left_out.jobs ?? 0)).toBe(LONG);
    for (const row of s.jobs) {
      expect(row.cut_fields).toEqual(["argv"]);
      expect(row.argv.join("").length).toBeLessThan(700);
      expect(row.argv[0]).toBe("printf");
    }
    expect(s.left_out.rows_cut).toBe(s.jobs.length);
    expect(s.left_out.next).toContain("get_job_status");
    expect(textOf(r)).toContain("get_job_status JOB_ID shows one job whole");
    // what was cut is there whole, one job at a time
    const one = await client.callTool({ name: "get_job_status", arguments: { job_id: s.jobs[0]!.job_id } });
    expect(JSON.stringify(structured(one))).toContain("tail-marker");
    // a listing that fits is whole, with nothing said
    const few = structured<{ jobs: unknown[]; left_out?: unknown }>(
      await client.callTool({ name: "list_jobs", arguments: { limit: 5, state: "running" } }),
    );
    expect(few.left_out).toBeUndefined();
  }, 60_000);
});

describe("a bad value in an error", () => {
  test("a 1 MB value is quoted, not echoed whole: tool errors, unknown arguments, protocol errors", async () => {
    const { client } = await connect();
    const big = "x".repeat(1_000_000);
    for (const [name, args] of [
      ["create_queue", { name: big, concurrency: 1 }],
      ["get_job_status", { job_id: big }],
      ["submit_job", { command: ["true"], queue: big }],
      ["submit_job", { command: ["true"], host: big }],
      ["submit_job", { command: ["true"], cwd: `/nonexistent/${big}` }],
      ["submit_job", { command: ["true"], after: [big] }],
      ["submit_job", { command: ["true"], array: big }],
      ["submit_job", { command: ["true"], [big]: 1 }],
      ["list_jobs", { name: big }],
      ["wait_for_completions", { job_ids: [big] }],
    ] as const) {
      const r = await client.callTool({ name, arguments: args as Record<string, unknown> });
      const answer = size(r);
      expect({ name, args: Object.keys(args).map((k) => k.slice(0, 20)), small: answer < 20_000 }).toEqual({
        name,
        args: Object.keys(args).map((k) => k.slice(0, 20)),
        small: true,
      });
    }
    let refused: unknown;
    await client.callTool({ name: big, arguments: {} }).catch((e: unknown) => {
      refused = e;
    });
    expect(String(refused)).toContain("ProtocolError: Tool xxx");
    expect(String(refused)).toContain("not found");
    expect(String(refused).length).toBeLessThan(5_000);
    expect(String(refused)).toContain("more characters left out");
  }, 120_000);
});

describe("text that is not text", () => {
  test("a lone surrogate in any string argument is refused by its name; no job is made", async () => {
    const { client } = await connect();
    const before = structured<{ count: number }>(
      await client.callTool({ name: "list_jobs", arguments: { limit: 1000 } }),
    );
    for (const [args, where] of [
      [{ command: ["true"], name: "a\ud800b" }, "name "],
      [{ command: ["true"], cwd: "/tmp/\udc00" }, "cwd "],
      [{ command: ["true"], artifacts: ["ok", "out/\ud800.json"] }, "artifacts[1] "],
      [{ command: ["true"], env: { OK: "1", X: "a\udfffb" } }, "env.X "],
      [{ command: ["true"], env: { "K\ud800": "v" } }, "a key of env "],
      [{ command: ["echo", "\ud800"] }, "command[1] "],
      [{ command: ["true"], queue: "q\udc80" }, "queue "],
    ] as const) {
      const r = await client.callTool({ name: "submit_job", arguments: args as Record<string, unknown> });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain(`${where}is not valid text`);
      expect(textOf(r)).not.toContain("\ufffd");
    }
    const after = structured<{ count: number }>(
      await client.callTool({ name: "list_jobs", arguments: { limit: 1000 } }),
    );
    expect(after.count).toBe(before.count);
  }, 60_000);
});

/** `awaitless mcp` over raw pipes: any bytes in, one JSON answer per line out. */
async function rawServer() {
  requireBinary();
  const proc = Bun.spawn([BINARY, "mcp"], {
    env: box.env,
    cwd: box.root,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const answers: Record<string, unknown>[] = [];
  (async () => {
    let buf = "";
    const dec = new TextDecoder();
    for await (const chunk of proc.stdout) {
      buf += dec.decode(chunk, { stream: true });
      const lines = buf.split("\n");
      buf = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) answers.push(JSON.parse(l));
    }
  })();
  const send = (bytes: Uint8Array | string) => {
    proc.stdin.write(bytes);
    proc.stdin.flush();
  };
  const answerTo = async (id: unknown) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = answers.find((a) => a.id === id);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no answer to ${String(id)}; got ${JSON.stringify(answers).slice(0, 500)}`);
      await Bun.sleep(20);
    }
  };
  send(
    `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-bytes", version: "0" } } })}\n`,
  );
  await answerTo(0);
  send(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return {
    answers,
    send,
    answerTo,
    async close() {
      proc.stdin.end();
      await Promise.race([proc.exited, Bun.sleep(10_000)]);
      proc.kill("SIGKILL");
    },
  };
}

/** A tools/call line with `bad` bytes spliced into one string where the JSON text has the marker @@. */
function callWithBytes(id: number, args: Record<string, unknown>, bad: number[]): Uint8Array {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "submit_job", arguments: args },
  });
  const [a, b] = text.split("@@") as [string, string];
  return Buffer.concat([Buffer.from(a), Buffer.from(bad), Buffer.from(b), Buffer.from("\n")]);
}

describe("raw stdio", () => {
  test("bytes that are not UTF-8 are refused by the argument's name, never stored as U+FFFD", async () => {
    const s = await rawServer();
    try {
      const cases: [Record<string, unknown>, number[], string][] = [
        [{ command: ["true"], name: "job-@@" }, [0xff], "name "],
        [{ command: ["true"], cwd: "/tmp/@@" }, [0xc3, 0x28], "cwd "],
        [{ command: ["true"], artifacts: ["out/@@.json"] }, [0xed, 0xa0, 0x80], "artifacts[0] "],
        [{ command: ["true"], env: { X: "@@" } }, [0xf8, 0x88, 0x80, 0x80, 0x80], "env.X "],
        [{ command: ["echo", "@@"] }, [0xc0, 0xaf], "command[1] "],
      ];
      let id = 100;
      for (const [args, bad, where] of cases) {
        s.send(callWithBytes(++id, args, bad));
        const a = (await s.answerTo(id)) as { result: { isError: boolean; content: { text: string }[] } };
        expect(a.result.isError).toBe(true);
        expect(a.result.content[0]!.text).toContain(`${where}is not valid text`);
      }
      s.send(
        `${JSON.stringify({ jsonrpc: "2.0", id: 200, method: "tools/call", params: { name: "list_jobs", arguments: { state: "active" } } })}\n`,
      );
      const listed = (await s.answerTo(200)) as { result: { structuredContent: { jobs: unknown[] } } };
      expect(listed.result.structuredContent.jobs).toEqual([]);
    } finally {
      await s.close();
    }
  }, 60_000);

  test("a line that is not JSON gets -32700, JSON that is not JSON-RPC -32600; blank lines none; the session goes on", async () => {
    const s = await rawServer();
    try {
      s.send('{"jsonrpc":"2.0","id":7,"method":"tools/list"\n');
      const broken = (await s.answerTo(7)) as { error: { code: number; message: string } };
      expect(broken.error.code).toBe(-32700);
      expect(broken.error.message).toContain("not JSON");
      s.send("this is not json at all\n");
      await s.answerTo(null);
      const nullAnswer = s.answers.find((a) => a.id === null) as { error: { code: number } };
      expect(nullAnswer.error.code).toBe(-32700);
      // a bad byte outside any string: not JSON either
      s.send(
        Buffer.concat([
          Buffer.from('{"jsonrpc":"2.0","id":8,'),
          Buffer.from([0xff]),
          Buffer.from('"method":"tools/list"}\n'),
        ]),
      );
      expect(((await s.answerTo(8)) as { error: { code: number } }).error.code).toBe(-32700);
      s.send(`${JSON.stringify({ jsonrpc: "2.0", id: 9, method: 5 })}\n`);
      expect(((await s.answerTo(9)) as { error: { code: number } }).error.code).toBe(-32600);
      const before = s.answers.length;
      s.send("\n  \r\n");
      s.send(`${JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/list" })}\n`);
      const tools = (await s.answerTo(10)) as { result: { tools: { name: string }[] } };
      expect(tools.result.tools.map((t) => t.name)).toContain("list_jobs");
      expect(s.answers.length).toBe(before + 1);
    } finally {
      await s.close();
    }
  }, 60_000);
});
