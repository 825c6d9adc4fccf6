// Job arrays over MCP through the binary and the official client: submit_job and run with `array`, wait_for_job on
// the array (counts, failed indices), a task addressed as ARRAY_ID.INDEX, cancel_job of the array, bad indices.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

type Conn = Awaited<ReturnType<typeof connectStdio>>;
// biome-ignore lint/suspicious/noExplicitAny: the tool's structured answer
type Json = any;

describe("job arrays over MCP", () => {
  const box = makeSandbox();
  let conn: Conn;
  beforeAll(async () => {
    conn = await connectStdio("modern", box.env, box.root);
  });
  afterAll(async () => {
    await conn?.close();
    box.remove();
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await conn.client.callTool({ name, arguments: args })) as { structuredContent: Json; isError?: boolean };

  test("submit_job with array, then wait_for_job on the array: counts and failed indices; one task by ARRAY_ID.INDEX", async () => {
    const sub = await call("submit_job", {
      command: 'echo "i=$AWAITLESS_ARRAY_INDEX"; [ "$AWAITLESS_ARRAY_INDEX" != 2 ]',
      array: "0-3%2",
    });
    const id = sub.structuredContent.job_id as string;
    expect(sub.structuredContent).toMatchObject({ array: "0-3%2", tasks: 4, throttle: 2 });
    const w = await call("wait_for_job", { job_id: id, timeout_seconds: 60 });
    expect(w.structuredContent).toMatchObject({
      job_id: id,
      state: "failed",
      wait_state: "complete",
      counts: { succeeded: 3, failed: 1 },
      failed_indices: [2],
    });
    expect(w.isError).toBe(true);
    const task = await call("wait_for_job", { job_id: `${id}.1` });
    expect(task.structuredContent).toMatchObject({ state: "succeeded", stdout_tail: "i=1\n" });
    const st = await call("get_job_status", { job_id: id });
    expect(st.structuredContent).toMatchObject({ job_id: id, state: "failed", tasks: 4 });
  }, 60_000);

  test("run with array holds for every task", async () => {
    const r = await call("run", { command: ["true"], array: "1,3,5" });
    expect(r.structuredContent).toMatchObject({
      state: "succeeded",
      counts: { succeeded: 3 },
      wait_state: "complete",
    });
  }, 60_000);

  test("cancel_job of the array cancels every task not ended", async () => {
    const sub = await call("submit_job", { command: ["sh", "-c", "echo started; sleep 60"], array: "0-3%1" });
    const id = sub.structuredContent.job_id as string;
    const c = await call("cancel_job", { job_id: id, grace_period_seconds: 1 });
    expect(c.structuredContent).toMatchObject({ job_id: id, job_state: "cancelled", cancel_requested: 4 });
  }, 60_000);

  test("list_queues leaves an active array's private queue out and counts it; create_queue of it is refused", async () => {
    const sub = await call("submit_job", { command: ["sh", "-c", "echo started; sleep 60"], array: "0-2%1" });
    const id = sub.structuredContent.job_id as string;
    expect(id).toMatch(/^job_/);
    const listed = (await conn.client.callTool({ name: "list_queues", arguments: {} })) as Json;
    expect(listed.structuredContent.queues.map((q: Json) => q.name)).not.toContain(`array.${id}`);
    expect(listed.structuredContent.hidden_array_queues).toBe(1);
    const text = listed.content[0].text as string;
    expect(text).toContain("1 job array(s) active; their private queues are not listed (get_job_status");
    const create = (await conn.client.callTool({
      name: "create_queue",
      arguments: { name: `array.${id}`, concurrency: 3 },
    })) as Json;
    expect(create.isError).toBe(true);
    expect(create.content[0].text).toContain(`call get_job_status with {"job_id":"${id}"}`);
    expect(create.content[0].text).not.toContain("awaitless ");
    await call("cancel_job", { job_id: id, grace_period_seconds: 1 });
    const after = (await conn.client.callTool({ name: "list_queues", arguments: {} })) as Json;
    expect(after.structuredContent.hidden_array_queues).toBe(0);
    expect(after.content[0].text).not.toContain("job array");
  }, 60_000);

  test("bad indices are refused with what to do, and nothing is created", async () => {
    const r = await call("submit_job", { command: ["true"], array: "9-1" });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.structuredContent)).toContain("ends before it starts");
  });
});
