// The compiled `awaitless mcp` at end of input: every request it received is answered, and written out whole, before it exits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";

const MIB = 1024 * 1024;
const sb = new Sandbox();
// Holds and inline windows far longer than the test may take: an answer can only come from the end of input.
sb.writeConfig(
  "[defaults]\nmax_return_bytes = 4194304\nlog_tail_lines = 1000000\nhold_budget_seconds = 600\ninline_timeout_seconds = 600\n",
);
afterAll(() => {
  // Jobs outlive their server by design: stop every one these tests left running, whatever was answered.
  const active = sb.run(["list", "--json", "--state", "active", "--limit", "1000"]).json?.jobs ?? [];
  for (const j of active as { job_id: string }[]) sb.run(["cancel", "--grace-period", "1s", j.job_id]);
  sb.cleanup();
});

type Json = Record<string, unknown>;
interface Session {
  code: number;
  stderr: string;
  byId: Map<unknown, Json>;
}

let seq = 0;
/**
 * `cat requests | awaitless mcp | slow reader`: the client writes its requests and closes its end at once;
 * the reader sleeps before reading (the slow reader under test, not a wait) so big answers fill the pipe.
 */
async function serve(requests: Json[]): Promise<Session> {
  const base = join(sb.root, `mcp-${++seq}`);
  const f = {
    req: `${base}.in`,
    out: `${base}.out`,
    err: `${base}.err`,
    rc: `${base}.rc`,
    pid: `${base}.pid`,
  };
  writeFileSync(f.req, requests.map((r) => `${JSON.stringify({ jsonrpc: "2.0", ...r })}\n`).join(""));
  const script =
    `cat '${f.req}' | { sh -c 'echo $$ > "$1"; exec "$0" mcp' "$0" '${f.pid}' 2>'${f.err}'; echo $? > '${f.rc}'; }` +
    ` | { sleep 0.3; cat > '${f.out}'; }`;
  const shell = Bun.spawn(["sh", "-c", script, BINARY], { cwd: sb.work, env: sb.env });
  try {
    await until("the server to exit at end of input", () => existsSync(f.rc) && existsSync(f.out), 30_000);
    await shell.exited;
  } finally {
    if (existsSync(f.pid)) killQuietly(Number(readFileSync(f.pid, "utf8")));
    killQuietly(shell.pid);
  }
  const lines = readFileSync(f.out, "utf8").split("\n").filter(Boolean);
  const messages = lines.map((l) => JSON.parse(l) as Json);
  return {
    code: Number(readFileSync(f.rc, "utf8")),
    stderr: readFileSync(f.err, "utf8"),
    byId: new Map(messages.filter((m) => m.id !== undefined && m.method === undefined).map((m) => [m.id, m])),
  };
}

const call = (id: number, name: string, args: Json, extra: Json = {}) => ({
  id,
  method: "tools/call",
  params: { name, arguments: args, ...extra },
});
const structured = (m: Json | undefined) =>
  (m?.result as { structuredContent?: Json } | undefined)?.structuredContent ?? {};

let jobs = 0;
/** A long command, different each time (the same active command twice is refused as a duplicate). */
const long = () => ["sh", "-c", `echo working; sleep 60; echo ${++jobs}`];

function runningJob(): string {
  const id = sb.submit(long());
  return id;
}

/** A finished job whose result carries 2 MiB of stdout: its answer is far bigger than a pipe's buffer. */
let bigJob = "";
beforeAll(() => {
  bigJob = sb.submit(["sh", "-c", `yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c ${2 * MIB}`]);
  if (sb.run(["wait", "--json", bigJob]).code !== 0) throw new Error(`job ${bigJob} did not succeed`);
});

describe("end of input", () => {
  test("2025 client: initialize, list, two runs and two waits are all answered", async () => {
    const waited = runningJob();
    const s = await serve([
      {
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sh", version: "1" } },
      },
      { method: "notifications/initialized" },
      { id: 2, method: "tools/list", params: {} },
      call(3, "run", { command: ["sh", "-c", "echo quick"] }),
      call(4, "run", { command: long() }),
      call(5, "wait_for_job", { job_id: waited }),
      call(6, "wait_for_job", { job_id: bigJob }),
    ]);
    expect(s.code).toBe(0);
    expect(s.stderr).not.toContain("internal");
    expect([...s.byId.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    for (const m of s.byId.values()) expect(m.error).toBeUndefined();
    const quick = structured(s.byId.get(3));
    const held = structured(s.byId.get(4));
    expect(String(quick.job_id)).toMatch(/^job_/);
    // A held call answers at once with what it has: the long run detached, the wait is pending.
    expect(held.delivery).toBe("detached");
    expect(structured(s.byId.get(5)).delivery_state).toBe("pending");
    // The biggest answer arrives whole, through a reader that was not reading yet.
    const done = structured(s.byId.get(6)) as { state?: string; stdout_tail: string };
    expect(done.state).toBe("succeeded");
    expect(done.stdout_tail.length).toBe(2 * MIB);
    // The job the closed session started keeps running.
    await until("the detached job running", () => sb.status(String(held.job_id)).state === "running");
  }, 60_000);

  test("2026 client: a held run, a wait and a listen stream are all answered", async () => {
    const _meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const waited = runningJob();
    const s = await serve([
      call(1, "run", { command: long() }, { _meta }),
      call(2, "wait_for_job", { job_id: waited }, { _meta }),
      {
        id: 3,
        method: "subscriptions/listen",
        params: { notifications: { resourceSubscriptions: [`awaitless://jobs/${waited}`] }, _meta },
      },
    ]);
    expect(s.code).toBe(0);
    expect([...s.byId.keys()].sort()).toEqual([1, 2, 3]);
    const held = structured(s.byId.get(1));
    expect(held.delivery).toBe("detached");
    expect(structured(s.byId.get(2)).delivery_state).toBe("pending");
    expect((s.byId.get(3)?.result as Json | undefined)?.resultType).toBe("complete");
  }, 60_000);
});

describe("a reader that goes away", () => {
  test("stdout closed after 100 bytes while 200 answers wait behind a full pipe: the server ends at once, saying why in one line", async () => {
    const base = join(sb.root, "mcp-head");
    const f = { req: `${base}.in`, err: `${base}.err`, rc: `${base}.rc`, pid: `${base}.pid` };
    const requests = [
      {
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "head", version: "1" },
        },
      },
      { method: "notifications/initialized" },
      ...Array.from({ length: 200 }, (_, i) => ({ id: i + 2, method: "tools/list" })),
    ];
    writeFileSync(f.req, requests.map((r) => `${JSON.stringify({ jsonrpc: "2.0", ...r })}\n`).join(""));
    const script =
      `cat '${f.req}' | { sh -c 'echo $$ > "$1"; exec "$0" mcp' "$0" '${f.pid}' 2>'${f.err}'; echo $? > '${f.rc}'; }` +
      // the reader waits first, so the answers fill the pipe and queue up behind it, then takes 100 bytes and goes
      " | { sleep 0.5; head -c 100 > /dev/null; }";
    const shell = Bun.spawn(["sh", "-c", script, BINARY], { cwd: sb.work, env: sb.env });
    try {
      await until("the server to exit once its reader is gone", () => existsSync(f.rc), 30_000);
      await shell.exited;
    } finally {
      if (existsSync(f.pid)) killQuietly(Number(readFileSync(f.pid, "utf8")));
      killQuietly(shell.pid);
    }
    expect(readFileSync(f.rc, "utf8").trim()).toBe("0");
    const stderr = readFileSync(f.err, "utf8");
    // one line naming the failed write; no runtime warning about listeners piling up, no stack trace
    expect(stderr).toMatch(/^awaitless mcp: EPIPE/m);
    expect(stderr).not.toMatch(/MaxListeners|Warning|\n\s+at /);
    expect(pidAlive(Number(readFileSync(f.pid, "utf8")))).toBe(false);
  }, 60_000);
});

test("the server process is gone after each session", () => {
  // serve() waited for its exit status; nothing it started may linger as a server.
  for (let i = 1; i <= seq; i++) {
    const pidFile = join(sb.root, `mcp-${i}.pid`);
    if (existsSync(pidFile)) expect(pidAlive(Number(readFileSync(pidFile, "utf8")))).toBe(false);
  }
});
