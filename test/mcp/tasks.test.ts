// The Tasks extension on the real service (local backend, temp data directory, gated jobs the test ends): the
// official ext-tasks requester, raw edge cases, schema validity.
import { afterEach, describe, expect, test } from "bun:test";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { until } from "../helpers/until.ts";
import { structured, type TapTransport, textOf, v2Framing } from "./harness.ts";
import { connectInProcess } from "./in-process.ts";
import { type RealService, realService } from "./real-service.ts";
import { tasksSchemaIssues } from "./tasks-schema.ts";

type Conn = Awaited<ReturnType<typeof connectInProcess>>;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server on `shared` (a second client of the same data), else on a new real service removed after the test. */
async function setup(shared?: RealService) {
  const real = shared ?? realService();
  if (!shared) cleanups.push(() => real.dispose());
  const conn = await connectInProcess(real.service, "modern", { taskPollIntervalMs: 50 });
  cleanups.push(() => conn.close());
  const jobCount = async () => (await real.service.list({ limit: 10_000 })).length;
  return { real, conn, jobCount };
}

function session(conn: Conn) {
  const s = createTaskSessionFromClient(conn.client, {
    endpointId: "awaitless-test",
    rawDispatch: conn.tap.rawDispatch,
    v2RequestFraming: v2Framing(conn.client),
  });
  cleanups.push(() => s.close());
  return s;
}

const withTasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const envelope = (capabilities: object) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
  "io.modelcontextprotocol/clientCapabilities": capabilities,
});
type Raw = {
  kind: "result" | "error";
  result?: Record<string, unknown>;
  error?: { code: number; data?: unknown };
};
const raw = (tap: TapTransport, method: string, params: object, capabilities: object = withTasks) =>
  tap.rawDispatch({ method, params: { ...params, _meta: envelope(capabilities) } }) as Promise<Raw>;

/** Every Tasks-extension message on the wire validates against the extension's schema.json. */
async function expectTasksWireValid(tap: TapTransport) {
  const byId = new Map(tap.log.filter((e) => e.dir === ">>").map((e) => [e.message.id, e.message]));
  const checked: string[] = [];
  for (const entry of tap.log) {
    const m = entry.message;
    const request = m.method === undefined ? byId.get(m.id) : undefined;
    const requestDef: Record<string, string> = {
      "tasks/get": "GetTaskRequest",
      "tasks/cancel": "CancelTaskRequest",
      "tasks/update": "UpdateTaskRequest",
    };
    const resultDef: Record<string, string> = {
      "tasks/get": "GetTaskResult",
      "tasks/cancel": "CancelTaskResult",
      "tasks/update": "UpdateTaskResult",
    };
    let def: string | undefined;
    let value: unknown = m;
    if (typeof m.method === "string" && requestDef[m.method]) def = requestDef[m.method];
    else if (request && typeof request.method === "string" && m.result !== undefined) {
      value = m.result;
      if (resultDef[request.method]) def = resultDef[request.method];
      else if (
        request.method === "tools/call" &&
        (m.result as { resultType?: string }).resultType === "task"
      ) {
        def = "CreateTaskResult";
      }
    }
    if (def === undefined) continue;
    expect({ def, issues: await tasksSchemaIssues(def, value) }).toEqual({ def, issues: [] });
    checked.push(def);
  }
  return checked;
}

describe("Tasks extension (2026-07-28)", () => {
  test("discover advertises the extension as exactly {}", async () => {
    const { conn } = await setup();
    expect(conn.client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/tasks"]).toEqual({});
  });

  test("the official requester settles a run_job task with the job result inlined", async () => {
    const { conn, real, jobCount } = await setup();
    const gate = real.gate();
    const execution = await session(conn).callTool("run_job", {
      command: gate.command,
      client_request_id: "settle-1",
    });
    expect(execution.kind).toBe("task");
    expect(await jobCount()).toBe(1);
    gate.end(0);
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    const result = resultFromTaskOutcome(outcome) as unknown as {
      structuredContent: { state: string };
    };
    expect(result.structuredContent.state).toBe("succeeded");
    // The inlined result is whole: no resource link to follow.
    expect(JSON.stringify(result)).not.toContain("resource_link");
    const checked = await expectTasksWireValid(conn.tap);
    expect(checked).toContain("CreateTaskResult");
    expect(checked).toContain("GetTaskResult");
    // The task handle is the spec shape: no SDK-added `content`.
    const handle = conn.tap.log.find(
      (e) => (e.message.result as { resultType?: string })?.resultType === "task",
    );
    expect(handle?.message.result).not.toHaveProperty("content");
  });

  test("a failed job completes the task with isError, a cancelled one cancels it", async () => {
    const { conn, real } = await setup();
    const s = session(conn);
    const failingGate = real.gate();
    failingGate.end(2);
    const failing = await s.callTool("run_job", {
      command: failingGate.command,
      client_request_id: "fail-1",
    });
    const failed = await failing.settle();
    expect(failed.outcome.status).toBe("completed");
    expect((resultFromTaskOutcome(failed.outcome) as { isError?: boolean }).isError).toBe(true);
    const longGate = real.gate();
    const long = await s.callTool("run_job", { command: longGate.command, client_request_id: "cancel-1" });
    await long.cancel();
    const settled = await long.settle();
    expect(settled.outcome.status).toBe("cancelled");
    const jobs = await real.service.list({ limit: 10 });
    const longJob = jobs.find((j) => j.argv.join("\0") === longGate.command.join("\0"));
    expect(longJob?.state).toBe("cancelled");
    expect(await expectTasksWireValid(conn.tap)).toContain("CancelTaskResult");
  });

  test("a run_job retry with the same client_request_id returns the same task", async () => {
    const { conn, real, jobCount } = await setup();
    const args = {
      name: "run_job",
      arguments: { command: real.gate().command, client_request_id: "same-1" },
    };
    const first = await raw(conn.tap, "tools/call", args);
    const second = await raw(conn.tap, "tools/call", args);
    expect(first.result?.resultType).toBe("task");
    expect(second.result?.taskId).toBe(first.result?.taskId as string);
    expect(await jobCount()).toBe(1);
    await expectTasksWireValid(conn.tap);
  });

  test("tasks/get while working says what the job is doing; tasks/update acknowledges", async () => {
    const { conn, real } = await setup();
    const gate = real.gate();
    const created = await raw(conn.tap, "tools/call", {
      name: "run_job",
      arguments: { command: gate.command, client_request_id: "w-1" },
    });
    const taskId = created.result?.taskId as string;
    await gate.write(taskId, "step 1\n");
    // a busy machine may answer before the output is observed: ask until the answer says so
    const got = await until("tasks/get to report the output", async () => {
      const r = await raw(conn.tap, "tasks/get", { taskId });
      return /last output/.test(String(r.result?.statusMessage)) ? r : null;
    });
    expect(got.result).toMatchObject({
      taskId,
      status: "working",
      pollIntervalMs: 50,
      resultType: "complete",
    });
    expect(got.result?.statusMessage).toMatch(/^running .*last output/);
    const updated = await raw(conn.tap, "tasks/update", { taskId, inputResponses: {}, unknownKey: 1 });
    expect(updated.kind).toBe("result");
    await expectTasksWireValid(conn.tap);
  });

  test("unknown task → -32602; tasks/* without the capability → -32021 with requiredCapabilities", async () => {
    const { conn } = await setup();
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const unknown = await raw(conn.tap, method, { taskId: "job_UNKNOWN", inputResponses: {} });
      expect(unknown.error?.code).toBe(-32602);
      const noCap = await raw(conn.tap, method, { taskId: "job_UNKNOWN", inputResponses: {} }, {});
      expect(noCap.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
      });
    }
  });

  test("without the capability run_job holds and returns the result; run never becomes a task", async () => {
    const { conn, real } = await setup();
    const quick = real.gate();
    quick.end(0);
    const blocking = await conn.client.callTool({
      name: "run_job",
      arguments: { command: quick.command, client_request_id: "plain-1" },
    });
    expect(structured<{ state: string }>(blocking).state).toBe("succeeded");
    const run = await raw(conn.tap, "tools/call", {
      name: "run",
      arguments: { command: real.gate().command, inline_timeout_seconds: 0.1 },
    });
    expect(run.result?.resultType).toBe("complete");
    expect((run.result?.structuredContent as { delivery?: string } | undefined)?.delivery).toBe("detached");
  });

  test("a second client recovers a task the first client left behind", async () => {
    const real = realService();
    cleanups.push(() => real.dispose());
    const first = await setup(real);
    const gate = real.gate();
    const execution = await session(first.conn).callTool("run_job", {
      command: gate.command,
      client_request_id: "recover-1",
    });
    if (execution.kind !== "task") throw new Error("expected a task");
    const reference = execution.serializeReference();
    await execution.detach();
    await first.conn.close();
    const second = await setup(real);
    const resumed = await session(second.conn).resumeTask(reference);
    const jobId = reference.taskId as string;
    await gate.write(jobId, "done\n");
    await gate.finish(jobId, 0);
    const { outcome } = await resumed.settle();
    expect(outcome.status).toBe("completed");
    expect(textOf(resultFromTaskOutcome(outcome))).toContain(`Job ${jobId} succeeded`);
  });
});
