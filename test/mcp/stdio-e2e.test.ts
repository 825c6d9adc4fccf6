// End to end: the official client (and ext-tasks requester) against the compiled `awaitless mcp` running real jobs.
import { afterEach, describe, expect, test } from "bun:test";
import path from "node:path";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { structured, textOf, v2Framing, waitFor } from "./harness.ts";
import { connectStdio, makeSandbox, ROOT } from "./stdio-client.ts";
import { tasksSchemaIssues } from "./tasks-schema.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sandbox(extraEnv: Record<string, string> = {}) {
  const box = makeSandbox(extraEnv);
  cleanups.push(box.remove);
  return box;
}

async function connect(era: "legacy" | "modern", box: ReturnType<typeof sandbox>) {
  const conn = await connectStdio(era, box.env, box.root);
  cleanups.push(conn.close);
  return conn;
}

for (const era of ["legacy", "modern"] as const) {
  describe(`awaitless mcp over stdio (${era})`, () => {
    test("lists the tools and runs a quick command inline", async () => {
      const box = sandbox();
      const { client } = await connect(era, box);
      expect((await client.listTools()).tools.length).toBeGreaterThanOrEqual(9);
      const result = await client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", "echo hello-$((6*7))"] },
      });
      const body = structured<{ delivery: string; state: string; stdout_tail: string }>(result);
      expect(body.delivery).toBe("inline");
      expect(body.state).toBe("succeeded");
      expect(body.stdout_tail).toContain("hello-42");
      const sleep = await client.callTool({ name: "run", arguments: { command: ["sleep", "20"] } });
      expect(sleep.isError).toBe(true);
      expect(textOf(sleep)).toContain("wait_for_job");
    }, 20_000);

    test("resource subscription: updated on completion, and at once for a finished job", async () => {
      const box = sandbox();
      const { client } = await connect(era, box);
      const updated: string[] = [];
      client.setNotificationHandler("notifications/resources/updated", (n) => {
        updated.push(n.params.uri);
      });
      const subscribe = async (uri: string) => {
        if (era === "legacy") await client.subscribeResource({ uri });
        else {
          const subscription = await client.listen({ resourceSubscriptions: [uri] });
          cleanups.push(() => subscription.close());
        }
      };
      const job = structured<{ job_id: string }>(
        await client.callTool({
          name: "submit_job",
          arguments: { command: ["sh", "-c", "echo working; sleep 1; exit 3"] },
        }),
      );
      const uri = `awaitless://jobs/${job.job_id}`;
      await subscribe(uri);
      await waitFor(
        () => (updated.includes(uri) ? true : undefined),
        15_000,
        "resources/updated on completion",
      );
      const read = await client.readResource({ uri });
      expect(JSON.parse((read.contents[0] as { text: string }).text).result.exit_code).toBe(3);
      // A second connection subscribing to the finished job hears about it at once.
      const late = await connect(era, box);
      const lateUpdates: string[] = [];
      late.client.setNotificationHandler("notifications/resources/updated", (n) => {
        lateUpdates.push(n.params.uri);
      });
      if (era === "legacy") await late.client.subscribeResource({ uri });
      else {
        const sub = await late.client.listen({ resourceSubscriptions: [uri] });
        cleanups.push(() => sub.close());
      }
      await waitFor(() => (lateUpdates.includes(uri) ? true : undefined), 5_000, "replay for a finished job");
    }, 40_000);
  });
}

describe("held calls (real job, real clock)", () => {
  test("progress arrives during a hold longer than 25 s; the hold ends with client_timeout and the job keeps running", async () => {
    const box = sandbox({
      AWAITLESS_MCP_HOLD_BUDGET_MS: "26000",
      AWAITLESS_MCP_PROGRESS_INTERVAL_MS: "5000",
    });
    const { client } = await connect("legacy", box);
    const job = structured<{ job_id: string }>(
      await client.callTool({
        name: "submit_job",
        arguments: { command: ["sh", "-c", "echo warming-up; sleep 40; echo never-seen"] },
      }),
    );
    const progressAt: number[] = [];
    const messages: string[] = [];
    const started = Date.now();
    const result = await client.callTool(
      { name: "wait_for_job", arguments: { job_id: job.job_id } },
      {
        timeout: 55_000,
        onprogress: (p) => {
          progressAt.push(Date.now());
          messages.push(p.message ?? "");
        },
      },
    );
    const heldMs = Date.now() - started;
    expect(heldMs).toBeGreaterThan(25_000);
    expect(heldMs).toBeLessThan(30_000);
    const body = structured<{ wait_state: string; state: string; next_action: string }>(result);
    expect(body.wait_state).toBe("client_timeout");
    // compact: job_state is left out when it repeats state
    expect(body).toMatchObject({ state: "running" });
    expect(body).not.toHaveProperty("job_state");
    expect(body.next_action).toContain(`wait_for_job with {"job_id":"${job.job_id}"}`);
    const gaps = [progressAt[0]! - started, ...progressAt.slice(1).map((t, i) => t - progressAt[i]!)];
    expect(progressAt.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(10_000);
    expect(messages.at(-1)).toMatch(/running \S+, last output \S+ ago/);
    const status = structured<{ state: string }>(
      await client.callTool({ name: "get_job_status", arguments: { job_id: job.job_id } }),
    );
    expect(status.state).toBe("running");
    await client.callTool({ name: "cancel_job", arguments: { job_id: job.job_id, grace_period_seconds: 1 } });
  }, 60_000);
});

describe("Tasks over stdio (2026-07-28)", () => {
  function session(conn: Awaited<ReturnType<typeof connect>>) {
    const s = createTaskSessionFromClient(conn.client, {
      endpointId: "awaitless-e2e",
      rawDispatch: conn.tap.rawDispatch,
      v2RequestFraming: v2Framing(conn.client),
    });
    cleanups.push(() => s.close());
    return s;
  }

  test("the requester settles a run_job task, cancels another, and a retry returns the same task", async () => {
    const box = sandbox({ AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "200" });
    const conn = await connect("modern", box);
    const s = session(conn);
    const ok = await s.callTool("run_job", {
      command: ["sh", "-c", "echo working; sleep 1; echo task-ok"],
      client_request_id: "t-ok",
    });
    expect(ok.kind).toBe("task");
    const settled = await ok.settle();
    expect(settled.outcome.status).toBe("completed");
    expect(structured<{ stdout_tail: string }>(resultFromTaskOutcome(settled.outcome)).stdout_tail).toContain(
      "task-ok",
    );
    const long = await s.callTool("run_job", {
      command: ["sh", "-c", "echo working; sleep 60; echo never"],
      client_request_id: "t-cancel",
    });
    await long.cancel();
    expect((await long.settle()).outcome.status).toBe("cancelled");
    const args = {
      name: "run_job",
      arguments: {
        command: ["sh", "-c", "echo working; sleep 2; echo retried"],
        client_request_id: "t-retry",
      },
    };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    };
    type Raw = { result?: { taskId?: string; resultType?: string } };
    const first = (await conn.tap.rawDispatch({
      method: "tools/call",
      params: { ...args, _meta: meta },
    })) as Raw;
    const retry = (await conn.tap.rawDispatch({
      method: "tools/call",
      params: { ...args, _meta: meta },
    })) as Raw;
    expect(first.result?.resultType).toBe("task");
    expect(retry.result?.taskId).toBe(first.result?.taskId ?? "missing");
    // Jobs outlive their server by design; stop this one so nothing runs past the test.
    await conn.client.callTool({
      name: "cancel_job",
      arguments: { job_id: first.result?.taskId ?? "missing" },
    });
    for (const entry of conn.tap.log) {
      const m = entry.message as { method?: string; result?: { resultType?: string; taskId?: string } };
      if (m.method === "tasks/get") expect(await tasksSchemaIssues("GetTaskRequest", m)).toEqual([]);
      if (m.result?.resultType === "task")
        expect(await tasksSchemaIssues("CreateTaskResult", m.result)).toEqual([]);
      else if (m.result?.taskId !== undefined)
        expect(await tasksSchemaIssues("GetTaskResult", m.result)).toEqual([]);
    }
  }, 60_000);

  test("a second client process recovers the task after the first client process was killed", async () => {
    const box = sandbox();
    const script = path.join(ROOT, "test", "mcp", "recovery-client.ts");
    const first = Bun.spawn([process.execPath, script, "recover-e2e", box.root], {
      cwd: ROOT,
      env: { ...box.env, AWAITLESS_TEST_BIN: process.env.AWAITLESS_TEST_BIN ?? "" },
      stdout: "pipe",
      stderr: "inherit",
    });
    let serverPid: number | undefined;
    cleanups.push(() => {
      for (const pid of [first.pid, serverPid]) {
        try {
          if (pid !== undefined) process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });
    const reader = first.stdout.getReader();
    let line = "";
    while (!line.includes("\n")) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error("the first client exited before printing its task reference");
      line += new TextDecoder().decode(chunk.value);
    }
    const printed = JSON.parse(line.trim()) as { reference: { taskId: string }; serverPid: number };
    serverPid = printed.serverPid;
    process.kill(first.pid, "SIGKILL");
    process.kill(serverPid, "SIGKILL");
    await first.exited;
    const second = await connect("modern", box);
    const resumed = await session(second).resumeTask(printed.reference as never);
    const { outcome } = await resumed.settle();
    expect(outcome.status).toBe("completed");
    expect(structured<{ stdout_tail: string }>(resultFromTaskOutcome(outcome)).stdout_tail).toContain(
      "finished-ok",
    );
    expect(printed.reference.taskId).toMatch(/^job_/);
  }, 60_000);
});
