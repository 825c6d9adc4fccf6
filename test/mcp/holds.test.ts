// Issue 14 through the compiled binary and the official client: per-client holds (profiles, config, --hold-seconds,
// the mcp-config entry), one progress notification per interval, guards, shell-string commands, cancel_job offers.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { structured, textOf, waitFor } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox, requireBinary } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Box = ReturnType<typeof makeSandbox>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;

function sandbox(extraEnv: Record<string, string> = {}, config = ""): Box {
  const box = makeSandbox(extraEnv);
  if (config) writeFileSync(box.env.AWAITLESS_CONFIG!, config);
  cleanups.push(box.remove);
  return box;
}

async function connect(
  box: Box,
  name: string,
  era: "legacy" | "modern" = "legacy",
  args: string[] = ["mcp"],
): Promise<Conn> {
  const conn = await connectStdio(era, box.env, box.root, name, { command: BINARY, args });
  cleanups.push(conn.close);
  return conn;
}

let jobs = 0;

/** Starts a job that runs until cancelled (cancelled again by the cleanup, whatever the test did). */
async function longJob(conn: Conn, extra: Record<string, unknown> = {}): Promise<string> {
  const { job_id } = structured<{ job_id: string }>(
    await conn.client.callTool({
      name: "submit_job",
      arguments: { command: ["sh", "-c", `echo started ${++jobs}; exec sleep 60`], ...extra },
    }),
  );
  expect(job_id).toMatch(/^job_/);
  cleanups.push(async () => {
    await conn.client
      .callTool({ name: "cancel_job", arguments: { job_id, grace_period_seconds: 1 } })
      .catch(() => {});
    await conn.client
      .callTool({ name: "wait_for_job", arguments: { job_id, timeout_seconds: 10 } })
      .catch(() => {});
  });
  return job_id;
}

/** The hold line the server logs on a client's first call. */
async function loggedHold(conn: Conn, name: string): Promise<string> {
  await conn.client.callTool({ name: "list_jobs", arguments: {} });
  const prefix = `awaitless mcp: client ${JSON.stringify(name)}: hold budget `;
  return waitFor(
    () =>
      conn
        .stderr()
        .split("\n")
        .find((l) => l.startsWith(prefix))
        ?.slice(prefix.length),
    10_000,
    `the hold line for ${name}`,
  );
}

describe("each client profile gets its own hold", () => {
  test.each([
    ["claude-code", "110s (built-in profile for Claude Code)"],
    ["codex-mcp-client", "290s (built-in profile for Codex CLI)"],
    ["gemini-cli-mcp-client", "540s (built-in profile for Gemini CLI)"],
    ["opencode", "540s (built-in profile for opencode)"],
    ["qwen-cli-mcp-client-awaitless", "540s (built-in profile for Qwen Code)"],
    ["qwen-code-mcp-client", "540s (built-in profile for Qwen Code)"],
    ["cursor-vscode", "50s (built-in profile for Cursor)"],
    ["Visual Studio Code", "50s (hold_budget_seconds (no client profile matched))"],
    ["some-agent", "50s (hold_budget_seconds (no client profile matched))"],
  ])(
    "%s → %s",
    async (name, expected) => {
      const conn = await connect(sandbox(), name);
      expect(await loggedHold(conn, name)).toBe(expected);
    },
    20_000,
  );

  test("the 2026 envelope's clientInfo picks the profile too", async () => {
    const conn = await connect(sandbox(), "claude-code", "modern");
    expect(await loggedHold(conn, "claude-code")).toBe("110s (built-in profile for Claude Code)");
  }, 20_000);

  test("a config override holds that long, then answers client_timeout", async () => {
    const box = sandbox(
      {},
      '[defaults]\nhold_budget_by_client_seconds = { "claude-code" = 1, "gemini-cli" = 2 }\n',
    );
    for (const [name, budget] of [
      ["claude-code", "1s"],
      ["gemini-cli-mcp-client", "2s"],
    ] as const) {
      const conn = await connect(box, name);
      const jobId = await longJob(conn);
      const result = await conn.client.callTool(
        { name: "wait_for_job", arguments: { job_id: jobId } },
        { timeout: 30_000 },
      );
      const body = structured<{ wait_state: string; state: string }>(result);
      expect(body).toMatchObject({ wait_state: "client_timeout", state: "running" });
      const prefix = name === "claude-code" ? "claude-code" : "gemini-cli";
      expect(await loggedHold(conn, name)).toBe(`${budget} (hold_budget_by_client_seconds "${prefix}")`);
    }
  }, 60_000);

  test("--hold-seconds wins over the profile; a bad value stops the server with the fix", async () => {
    const conn = await connect(sandbox(), "claude-code", "legacy", ["mcp", "--hold-seconds", "1"]);
    const jobId = await longJob(conn);
    const result = await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: jobId } });
    expect(structured<{ wait_state: string }>(result).wait_state).toBe("client_timeout");
    expect(await loggedHold(conn, "claude-code")).toBe("1s (--hold-seconds of this server)");
    requireBinary();
    const bad = Bun.spawnSync([BINARY, "mcp", "--hold-seconds", "soon"], {
      env: sandbox().env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.toString()).toContain("--hold-seconds");
    expect(bad.stderr.toString()).toContain("awaitless mcp --hold-seconds 110");
    expect(bad.stdout.toString()).toBe("");
  }, 30_000);

  test("the entry `mcp-config gemini --write` writes makes the server hold 540 s for Gemini", async () => {
    const box = sandbox();
    const write = Bun.spawnSync([BINARY, "mcp-config", "gemini", "--write"], {
      env: box.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(write.exitCode, write.stderr.toString()).toBe(0);
    const entry = JSON.parse(readFileSync(path.join(box.root, ".gemini", "settings.json"), "utf8")).mcpServers
      .awaitless as { command: string; args: string[]; timeout: number };
    expect(entry.timeout).toBe(600_000);
    const conn = await connect(box, "gemini-cli-mcp-client", "legacy", entry.args);
    expect(await loggedHold(conn, "gemini-cli-mcp-client")).toBe("540s (--hold-seconds of this server)");
  }, 20_000);
});

describe("progress", () => {
  test("at most one notification per interval across a hold (2 s interval, 8.5 s hold → at most 4)", async () => {
    const box = sandbox({ AWAITLESS_MCP_PROGRESS_INTERVAL_MS: "2000" });
    const conn = await connect(box, "some-agent");
    const jobId = await longJob(conn);
    let count = 0;
    const result = await conn.client.callTool(
      { name: "wait_for_job", arguments: { job_id: jobId, timeout_seconds: 8.5 } },
      { timeout: 30_000, onprogress: () => count++ },
    );
    expect(structured<{ wait_state: string }>(result).wait_state).toBe("client_timeout");
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThanOrEqual(4);
  }, 30_000);
});

describe("pending answers offer cancel_job for a stalled job", () => {
  test("stalled → next_action names cancel_job with the job_id", async () => {
    const conn = await connect(sandbox(), "some-agent");
    const jobId = await longJob(conn, { stall_timeout_seconds: 1 });
    await waitFor(
      async () => {
        const s = structured<{ state: string }>(
          await conn.client.callTool({ name: "get_job_status", arguments: { job_id: jobId } }),
        );
        return s.state === "stalled" ? true : undefined;
      },
      20_000,
      "the job to stall",
    );
    const result = await conn.client.callTool({
      name: "wait_for_job",
      arguments: { job_id: jobId, timeout_seconds: 1 },
    });
    const body = structured<{ state: string; next_action: string }>(result);
    expect(body.state).toBe("stalled");
    expect(body.next_action).toContain(`call cancel_job with {"job_id":"${jobId}"}`);
  }, 40_000);
});

describe("guards through the binary", () => {
  const refused: [unknown, RegExp][] = [
    [["bash", "-lc", "sleep 30"], /wait_for_job/],
    ["sleep 5 && ls", /wait_for_job/],
    [["env", "A=1", "nohup", "sleep", "9"], /wait_for_job/],
    [["timeout", "60", "sleep", "50"], /wait_for_job/],
    [["ssh", "somehost", "sleep 30 && uptime"], /wait_for_job/],
    [["watch", "date"], /get_job_logs/],
    [["top"], /top","-b"/],
    ["tail -f /etc/hostname", /get_job_logs/],
    [["less", "/etc/hostname"], /cat/],
    [["python3"], /script/],
    [["node"], /script/],
    [["bash"], /-c/],
  ];

  test("refused commands launch nothing and say what to do instead", async () => {
    const conn = await connect(sandbox(), "some-agent");
    for (const [command, hint] of refused) {
      const result = await conn.client.callTool({ name: "run", arguments: { command } });
      expect(result.isError, JSON.stringify(command)).toBe(true);
      expect(structured<{ error: { code: string } }>(result).error.code).toBe("invalid_argument");
      expect(textOf(result)).toMatch(hint);
    }
    const jobs = structured<{ count: number }>(
      await conn.client.callTool({ name: "list_jobs", arguments: {} }),
    );
    expect(jobs.count).toBe(0);
  }, 30_000);

  test("a sleep in a condition loop, after work, or top -b runs", async () => {
    const conn = await connect(sandbox(), "some-agent");
    for (const command of [
      "n=0; until [ $n -ge 2 ]; do n=$((n+1)); sleep 0.1; done; echo looped-$n",
      ["sh", "-c", "echo first; sleep 0.1; echo after"],
      ["top", "-b", "-n", "1"],
    ]) {
      const result = await conn.client.callTool({ name: "run", arguments: { command } });
      const body = structured<{ delivery: string; state: string; stdout_tail: string }>(result);
      expect(body.delivery, JSON.stringify(command)).toBe("inline");
      expect(body.state).toBe("succeeded");
    }
  }, 30_000);

  test("a duplicate's refusal says independent commands may run concurrently", async () => {
    const conn = await connect(sandbox(), "some-agent");
    await longJob(conn);
    const again = await conn.client.callTool({
      name: "submit_job",
      arguments: { command: ["sh", "-c", `echo started ${jobs}; exec sleep 60`] },
    });
    expect(structured<{ error: { code: string } }>(again).error.code).toBe("duplicate_active_job");
    expect(textOf(again)).toContain("Independent commands may run concurrently");
  }, 20_000);
});

describe("command as one shell string", () => {
  test("runs by sh -c and says so; the argv form stays exact and unmarked", async () => {
    const conn = await connect(sandbox(), "some-agent");
    const shell = await conn.client.callTool({
      name: "run",
      arguments: { command: "echo one | tr a-z A-Z && echo 'two  spaces' >&2; echo $((6*7))" },
    });
    const body = structured<{
      command_form?: string;
      state: string;
      stdout_tail: string;
      stderr_tail: string;
    }>(shell);
    expect(body.command_form).toBe("shell");
    expect(body.state).toBe("succeeded");
    expect(body.stdout_tail).toContain("ONE\n42");
    expect(body.stderr_tail).toContain("two  spaces");
    const argv = await conn.client.callTool({
      name: "run",
      arguments: { command: ["echo", "one | tr a-z A-Z", "$((6*7))"] },
    });
    const exact = structured<{ command_form?: string; stdout_tail: string }>(argv);
    expect(exact.command_form).toBeUndefined();
    expect(exact.stdout_tail).toContain("one | tr a-z A-Z $((6*7))");
    const blank = await conn.client.callTool({ name: "run", arguments: { command: "  " } });
    expect(blank.isError).toBe(true);
    expect(textOf(blank)).toMatch(/blank|shell string/);
  }, 20_000);
});
