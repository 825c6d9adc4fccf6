// 2025-11-25 Tasks through the compiled binary: raw JSON-RPC following the spec text (schema-checked),
// and the official ext-tasks requester in its 2025 generation; a new server finds a task after a SIGKILL.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { Raw2025Client, type RawResponse } from "./raw-2025-client.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

type Json = Record<string, unknown>;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const TASKS = { tasks: { requests: {} } };

function sandbox() {
  const box = makeSandbox({ AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "100" });
  cleanups.push(box.remove);
  return box;
}

async function start(box: ReturnType<typeof sandbox>, capabilities: Json = TASKS) {
  const client = await Raw2025Client.start(box.env, box.root, capabilities);
  cleanups.push(async () => {
    await client.close();
  });
  return client;
}

/** Every message so far validated against the 2025-11-25 schema. */
async function expectSchemaValid(client: Raw2025Client, mustHaveChecked: string[]) {
  await client.validated();
  expect(client.issues).toEqual([]);
  for (const definition of mustHaveChecked) expect([...client.checked]).toContain(definition);
}

/** A job that runs until the file `name` appears in the sandbox, then prints done-<name>. */
function gated(name: string): string[] {
  return ["sh", "-c", `until [ -e ${name} ]; do sleep 0.05; done; echo done-${name}`];
}

const open = (box: ReturnType<typeof sandbox>, name: string) => writeFileSync(path.join(box.root, name), "");

function result(response: RawResponse): Json {
  if (response.error) throw new Error(`unexpected error ${JSON.stringify(response.error)}`);
  return response.result!;
}

async function startTask(client: Raw2025Client, command: string[], requestId: string, meta?: Json) {
  const created = result(
    await client.request("tools/call", {
      name: "run_job",
      arguments: { command, client_request_id: requestId },
      task: { ttl: 60_000 },
      ...(meta !== undefined && { _meta: meta }),
    }),
  );
  return created;
}

describe("2025-11-25 Tasks over stdio (raw JSON-RPC, schema-checked)", () => {
  test("the capability and execution.taskSupport go only to clients that declare tasks", async () => {
    const box = sandbox();
    const withTasks = await start(box);
    expect(withTasks.initializeResult.capabilities).toMatchObject({
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    const tools = result(await withTasks.request("tools/list", {})).tools as Array<Json>;
    const support = Object.fromEntries(tools.map((t) => [t.name, (t.execution as Json)?.taskSupport]));
    expect(support.run_job).toBe("optional");
    for (const name of ["run", "submit_job", "wait_for_job", "cancel_job"])
      expect(support[name]).toBeUndefined();
    // A forbidden tool called as a task: -32601, nothing run.
    const forbidden = await withTasks.request("tools/call", {
      name: "run",
      arguments: { command: ["true"] },
      task: {},
    });
    expect(forbidden.error?.code).toBe(-32601);
    expect(forbidden.error?.message).toContain("run_job");
    await expectSchemaValid(withTasks, ["InitializeResult", "ListToolsResult", "JSONRPCErrorResponse"]);

    const plain = await start(box, {});
    expect(plain.initializeResult.capabilities).not.toHaveProperty("tasks");
    const plainTools = result(await plain.request("tools/list", {})).tools as Array<Json>;
    expect(plainTools.some((t) => t.execution !== undefined)).toBe(false);
    // Task metadata from a client without the capability is ignored: the call runs normally.
    const normal = result(
      await plain.request("tools/call", {
        name: "run_job",
        arguments: { command: ["sh", "-c", "echo plain-ok"], client_request_id: "plain" },
        task: { ttl: 1000 },
      }),
    );
    expect(normal).not.toHaveProperty("task");
    expect((normal.structuredContent as Json).state).toBe("succeeded");
    await expectSchemaValid(plain, ["InitializeResult", "CallToolResult"]);
  }, 30_000);

  test("lifecycle: working → tasks/result blocks until the job ends → completed, with a status notification", async () => {
    const box = sandbox();
    const client = await start(box);
    const created = await startTask(client, gated("go"), "life");
    const task = created.task as Json;
    expect(task.status).toBe("working");
    expect(task.taskId).toMatch(/^job_/);
    const immediate = (created._meta as Json)["io.modelcontextprotocol/model-immediate-response"];
    expect(immediate).toContain(`wait_for_job with {"job_id":"${task.taskId}"}`);
    const taskId = task.taskId as string;

    let answered = false;
    const pendingResult = client.request("tasks/result", { taskId }).then((r) => {
      answered = true;
      return r;
    });
    // A tasks/get sent after tasks/result is answered while tasks/result still blocks.
    const working = result(await client.request("tasks/get", { taskId }));
    expect(working).toMatchObject({ taskId, status: "working", pollInterval: 100 });
    expect(typeof working.ttl).toBe("number");
    expect(answered).toBe(false);

    open(box, "go");
    const final = result(await pendingResult);
    expect(final.isError).toBeUndefined();
    expect((final.structuredContent as Json).state).toBe("succeeded");
    expect((final.structuredContent as Json).stdout_tail).toContain("done-go");
    expect(final._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId } });

    const status = await client.notification(
      (n) => n.method === "notifications/tasks/status" && (n.params as Json).taskId === taskId,
    );
    expect((status.params as Json).status).toBe("completed");
    expect(result(await client.request("tasks/get", { taskId })).status).toBe("completed");
    // tasks/result of a finished task answers at once, the same result.
    const again = result(await client.request("tasks/result", { taskId }));
    expect(again.structuredContent).toEqual(final.structuredContent);
    await expectSchemaValid(client, [
      "CreateTaskResult",
      "GetTaskResult",
      "CallToolResult",
      "TaskStatusNotification",
    ]);
  }, 30_000);

  test("tasks/result holds past the hold budget, with progress, until the job ends; the creating call gets progress too", async () => {
    const box = makeSandbox({
      AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "100",
      AWAITLESS_MCP_HOLD_BUDGET_MS: "1000",
      AWAITLESS_MCP_PROGRESS_INTERVAL_MS: "200",
    });
    cleanups.push(box.remove);
    const client = await start(box);
    const taskId = ((await startTask(client, gated("late"), "late", { progressToken: "c-1" })).task as Json)
      .taskId as string;
    let answered = false;
    const pending = client.request("tasks/result", { taskId, _meta: { progressToken: "r-1" } }).then((r) => {
      answered = true;
      return r;
    });
    const progressOf = () =>
      client.notifications
        .filter((n) => n.method === "notifications/progress" && (n.params as Json).progressToken === "r-1")
        .map((n) => (n.params as Json).progress as number);
    // Eight progress ticks 200 ms apart: the 1 s hold budget has passed several times over.
    await client.notification(() => progressOf().length >= 8);
    expect(answered).toBe(false);
    // The creating call's progressToken stays valid while the task works: progress tagged with the task.
    const onCall = await client.notification(
      (n) => n.method === "notifications/progress" && (n.params as Json).progressToken === "c-1",
    );
    expect((onCall.params as Json)._meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId } });
    expect((onCall.params as Json).message).toContain("running");
    open(box, "late");
    const final = result(await pending);
    expect((final.structuredContent as Json).state).toBe("succeeded");
    const seen = progressOf();
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(new Set(seen).size).toBe(seen.length);
    await expectSchemaValid(client, ["ProgressNotification", "CallToolResult"]);
  }, 40_000);

  test("end of input answers a blocked tasks/result at once; the job keeps running", async () => {
    const box = sandbox();
    const client = await start(box);
    const taskId = ((await startTask(client, gated("eof"), "eof")).task as Json).taskId as string;
    const pending = client.request("tasks/result", { taskId });
    // The request is in the server's hands once a later request is answered.
    await client.request("tasks/get", { taskId });
    client.proc.stdin.end();
    const answer = await pending;
    expect(answer.error?.code).toBe(-32603);
    expect(answer.error?.message).toContain("keeps running");
    expect(await client.proc.exited).toBe(0);
    // The job was not touched: a new server process still sees it working, then collects it.
    const next = await start(box);
    expect(result(await next.request("tasks/get", { taskId })).status).toBe("working");
    open(box, "eof");
    expect((result(await next.request("tasks/result", { taskId })).structuredContent as Json).state).toBe(
      "succeeded",
    );
    await expectSchemaValid(client, ["JSONRPCErrorResponse"]);
  }, 40_000);

  test("a failed job completes the task with an isError result; tasks/cancel cancels a running one", async () => {
    const box = sandbox();
    const client = await start(box);
    const failed = (await startTask(client, ["sh", "-c", "echo bad >&2; exit 3"], "fail")).task as Json;
    const failedResult = result(await client.request("tasks/result", { taskId: failed.taskId as string }));
    expect(failedResult.isError).toBe(true);
    expect((failedResult.structuredContent as Json).state).toBe("failed");
    expect(result(await client.request("tasks/get", { taskId: failed.taskId as string })).status).toBe(
      "completed",
    );

    const running = (await startTask(client, gated("never"), "cancel")).task as Json;
    const taskId = running.taskId as string;
    const cancelled = result(await client.request("tasks/cancel", { taskId }));
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    const note = await client.notification(
      (n) => n.method === "notifications/tasks/status" && (n.params as Json).taskId === taskId,
    );
    expect((note.params as Json).status).toBe("cancelled");
    const cancelledResult = result(await client.request("tasks/result", { taskId }));
    expect((cancelledResult.structuredContent as Json).state).toBe("cancelled");
    // Cancelling a task that already ended, and unknown tasks: -32602.
    expect((await client.request("tasks/cancel", { taskId })).error?.code).toBe(-32602);
    const unknown = await client.request("tasks/get", { taskId: "job_00000000000000000000000000" });
    expect(unknown.error?.code).toBe(-32602);
    expect(unknown.error?.message).toContain("Task not found");
    await expectSchemaValid(client, ["CancelTaskResult", "CallToolResult", "JSONRPCErrorResponse"]);
  }, 40_000);

  test("tasks/list pages with opaque cursors; a bad cursor is -32602; any job ID is a taskId", async () => {
    const box = sandbox();
    const client = await start(box);
    const ids = new Set<string>();
    await Promise.all(
      Array.from({ length: 23 }, async (_, i) => {
        const r = result(
          await client.request("tools/call", {
            name: "submit_job",
            arguments: { command: ["sh", "-c", `echo job-${i}`] },
          }),
        );
        ids.add((r.structuredContent as Json).job_id as string);
      }),
    );
    const first = result(await client.request("tasks/list", {}));
    const firstTasks = first.tasks as Json[];
    expect(firstTasks.length).toBe(20);
    expect(typeof first.nextCursor).toBe("string");
    const second = result(await client.request("tasks/list", { cursor: first.nextCursor as string }));
    expect(second.nextCursor).toBeUndefined();
    const listed = [...firstTasks, ...(second.tasks as Json[])].map((t) => t.taskId as string);
    expect(new Set(listed)).toEqual(ids);
    expect(listed.length).toBe(ids.size);
    // Any job ID is a taskId: a submit_job job's result through tasks/result.
    const someId = [...ids][0]!;
    const fromSubmit = result(await client.request("tasks/result", { taskId: someId }));
    expect((fromSubmit.structuredContent as Json).job_id).toBe(someId);
    const bad = await client.request("tasks/list", { cursor: "not a cursor!" });
    expect(bad.error?.code).toBe(-32602);
    await expectSchemaValid(client, ["ListTasksResult", "ListTasksRequest"]);
  }, 60_000);

  test("a new server process finds the task after the first one was SIGKILLed", async () => {
    const box = sandbox();
    const first = await start(box);
    const taskId = ((await startTask(first, gated("resume"), "resume")).task as Json).taskId as string;
    first.kill("SIGKILL");
    await first.proc.exited;

    const second = await start(box);
    expect(result(await second.request("tasks/get", { taskId })).status).toBe("working");
    const listed = (result(await second.request("tasks/list", {})).tasks as Json[]).map((t) => t.taskId);
    expect(listed).toContain(taskId);
    const pending = second.request("tasks/result", { taskId });
    open(box, "resume");
    const final = result(await pending);
    expect((final.structuredContent as Json).state).toBe("succeeded");
    expect((final.structuredContent as Json).stdout_tail).toContain("done-resume");
    const note = await second.notification(
      (n) => n.method === "notifications/tasks/status" && (n.params as Json).taskId === taskId,
    );
    expect((note.params as Json).status).toBe("completed");
    await expectSchemaValid(second, ["GetTaskResult", "CallToolResult", "TaskStatusNotification"]);
  }, 40_000);
});

describe("2025-11-25 Tasks with the official requester (ext-tasks, generation v1)", () => {
  test("settles a run_job task, and cancels another", async () => {
    const box = sandbox();
    const conn = await connectStdio("legacy", box.env, box.root, "ext-tasks-v1", undefined, TASKS);
    cleanups.push(conn.close);
    const session = createTaskSessionFromClient(conn.client, { endpointId: "awaitless-2025" });
    cleanups.push(() => session.close());
    const execution = await session.callTool(
      "run_job",
      { command: ["sh", "-c", "echo via-requester"], client_request_id: "ext-v1" },
      { task: { preference: "require" } },
    );
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    const final = resultFromTaskOutcome(outcome) as unknown as Json;
    expect((final.structuredContent as Json).state).toBe("succeeded");
    expect((final.structuredContent as Json).stdout_tail).toContain("via-requester");

    const long = await session.callTool(
      "run_job",
      { command: gated("never"), client_request_id: "ext-v1-cancel" },
      { task: { preference: "require" } },
    );
    expect(long.kind).toBe("task");
    await long.cancel();
    expect((await long.settle()).outcome.status).toBe("cancelled");
  }, 40_000);
});
