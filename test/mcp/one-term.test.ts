// The compiled `awaitless mcp`: cancel_job and tasks/cancel give the job's command exactly one SIGTERM (its cleanup
// runs to the end), like the CLI's cancel.
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { readStarted } from "../../src/wrapper/protocol.ts";
import { cleanupIn, termCounter, termsIn } from "../helpers/term-counter.ts";
import { structured, textOf, v2Framing, waitFor } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const counter = termCounter('"$AWAITLESS_JOB_DIR"');

function isGone(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

async function setUp(era: "legacy" | "modern") {
  const box = makeSandbox({ AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "200" });
  cleanups.push(box.remove);
  const conn = await connectStdio(era, box.env, box.root);
  cleanups.push(conn.close);
  const cli = (args: string[]) =>
    JSON.parse(Bun.spawnSync([BINARY, ...args], { env: box.env, cwd: box.root }).stdout.toString());
  // the job directory and the command's readiness, read the way a user would (inspect, logs)
  const ready = async (jobId: string): Promise<string> => {
    await waitFor(
      () => (cli(["logs", "--json", jobId]).stdout?.includes("ready") ? true : undefined),
      15_000,
      "ready",
    );
    return cli(["inspect", "--json", jobId]).job_dir as string;
  };
  return { conn, ready };
}

describe("one SIGTERM through MCP", () => {
  test("cancel_job: one TERM, the cleanup completes", async () => {
    const { conn, ready } = await setUp("legacy");
    const job = structured<{ job_id: string }>(
      await conn.client.callTool({ name: "submit_job", arguments: { command: counter } }),
    );
    const dir = await ready(job.job_id);
    const r = structured<{ job_state: string }>(
      await conn.client.callTool({
        name: "cancel_job",
        arguments: { job_id: job.job_id, grace_period_seconds: 30 },
      }),
    );
    expect(r.job_state).toBe("cancelled");
    expect(termsIn(dir)).toBe(1);
    expect(cleanupIn(dir)).toBe("cleaned up after 1 TERM\n");
  }, 60_000);

  test("tasks/cancel: one TERM, the cleanup completes", async () => {
    const { conn, ready } = await setUp("modern");
    const s = createTaskSessionFromClient(conn.client, {
      endpointId: "awaitless-one-term",
      rawDispatch: conn.tap.rawDispatch,
      v2RequestFraming: v2Framing(conn.client),
    });
    cleanups.push(() => s.close());
    const task = await s.callTool("run_job", { command: counter, client_request_id: "one-term" });
    expect(task.kind).toBe("task");
    const jobId = String(task.handle?.taskId);
    const dir = await ready(jobId);
    await task.cancel();
    expect((await task.settle()).outcome.status).toBe("cancelled");
    await waitFor(() => cleanupIn(dir) ?? undefined, 15_000, "the cleanup to end");
    expect(termsIn(dir)).toBe(1);
    expect(cleanupIn(dir)).toBe("cleaned up after 1 TERM\n");
  }, 60_000);

  test("cancel_job of a job lost with its wrapper killed: its command's group gets one TERM, the job stays lost", async () => {
    const { conn, ready } = await setUp("legacy");
    const job = structured<{ job_id: string }>(
      await conn.client.callTool({
        name: "submit_job",
        arguments: { command: termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm: true }) },
      }),
    );
    const dir = await ready(job.job_id);
    const started = readStarted(dir)!;
    try {
      process.kill(started.wrapperPid, "SIGKILL");
      if (started.monitorPid) process.kill(started.monitorPid, "SIGKILL");
      await waitFor(() => (isGone(started.wrapperPid) ? true : undefined), 15_000, "the wrapper to be gone");
      const res = await conn.client.callTool({
        name: "cancel_job",
        arguments: { job_id: job.job_id, grace_period_seconds: 1 },
      });
      const r = structured<{ job_state: string; leftover?: { action: string } }>(res);
      expect(r.job_state).toBe("lost");
      expect(r.leftover?.action).toBe("signalled");
      expect(textOf(res)).toContain(`process group ${started.pid}`);
      await waitFor(() => (isGone(started.pid) ? true : undefined), 15_000, "the group to be killed");
      expect(termsIn(dir)).toBe(1);
    } finally {
      try {
        process.kill(-started.pid, "SIGKILL");
      } catch {}
    }
  }, 60_000);
});
