// `retries`/`retry_on` over MCP end to end (the official client against the compiled `awaitless mcp`): a failing
// command retried on exit succeeds on attempt 2 under the same job_id, the MCP server itself launching the next
// attempt after the backoff while wait_for_job holds; a bad retry class is refused and nothing is created.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { structured } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("retries over MCP", () => {
  test("retry_on exit: attempt 2 succeeds, one job_id; a bad class is invalid", async () => {
    const box = makeSandbox();
    cleanups.push(box.remove);
    const conn = await connectStdio("modern", box.env, box.root);
    cleanups.push(conn.close);
    const call = (name: string, args: Record<string, unknown>) =>
      conn.client.callTool({ name, arguments: args });
    const count = join(box.root, "count");
    const sub = structured<{ job_id: string }>(
      await call("submit_job", {
        command: `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '${count}'; echo "try $n"; [ $n -ge 2 ]`,
        retries: 2,
        retry_on: ["exit"],
      }),
    );
    const r = structured<{
      job_id: string;
      state: string;
      attempt: number;
      attempts: number;
      stdout_tail: string;
    }>(await call("wait_for_job", { job_id: sub.job_id, timeout_seconds: 60 }));
    expect(r).toMatchObject({
      job_id: sub.job_id,
      state: "succeeded",
      attempt: 2,
      attempts: 3,
      stdout_tail: "try 2\n",
    });
    const status = structured<{ attempt: number; attempts: number }>(
      await call("get_job_status", { job_id: sub.job_id }),
    );
    expect([status.attempt, status.attempts]).toEqual([2, 3]);

    const before = structured<{ jobs: unknown[] }>(await call("list_jobs", { limit: 100 })).jobs.length;
    const bad = await call("submit_job", { command: "true", retries: 1, retry_on: ["timeout"] });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("lost, infrastructure, exit");
    expect(structured<{ jobs: unknown[] }>(await call("list_jobs", { limit: 100 })).jobs.length).toBe(before);
  }, 90_000);

  test("while a retry waits out its backoff, every answer says it waits for attempt N, when, and why", async () => {
    const box = makeSandbox();
    cleanups.push(box.remove);
    const conn = await connectStdio("modern", box.env, box.root);
    cleanups.push(conn.close);
    const call = (name: string, args: Record<string, unknown>) =>
      conn.client.callTool({ name, arguments: args });
    const text = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;
    // the default backoff (10 s) is the window the answers below fall in
    const args = { command: "exit 7", retries: 1, retry_on: ["exit"] };
    const sub = structured<{ job_id: string }>(
      await call("submit_job", { ...args, client_request_id: "backoff-1" }),
    );
    const w = await call("wait_for_job", { job_id: sub.job_id, timeout_seconds: 2 });
    const pending = structured<{ wait_state: string; status_message: string; next_action: string }>(w);
    expect(pending.wait_state).toBe("client_timeout");
    expect(pending.status_message).toMatch(
      /^waiting for attempt 2 of 2 in about \d+s; attempt 1 failed with exit code 7$/,
    );
    expect(pending.next_action).toContain(
      `Job ${sub.job_id} is still queued, ${pending.status_message}: only this`,
    );
    const st = await call("get_job_status", { job_id: sub.job_id });
    expect(structured<{ next_attempt_at: string }>(st).next_attempt_at).toBeString();
    expect(text(st)).toContain("waiting for attempt 2 of 2 in about");
    // the same request again replays the job: its next step says what it waits for, not "its queue"
    const again = await call("submit_job", { ...args, client_request_id: "backoff-1" });
    const next = structured<{ next_action: string }>(again).next_action;
    expect(next).toMatch(
      /is waiting for attempt 2 of 2 in about \d+s; attempt 1 failed with exit code 7; it goes on in the/,
    );
    expect(next).not.toContain("waiting in its queue");
    await call("cancel_job", { job_id: sub.job_id });
  }, 90_000);
});
