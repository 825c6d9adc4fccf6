// MCP run_job against the real test cluster: the compiled `awaitless mcp`, the official client and the ext-tasks
// requester; the task settles to `completed` with the Slurm job's result inlined, and every Tasks message is valid.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { structured, v2Framing } from "../mcp/harness.ts";
import { connectStdio, makeSandbox } from "../mcp/stdio-client.ts";
import { tasksSchemaIssues } from "../mcp/tasks-schema.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm MCP e2e");

interface RunJobResult {
  job_id: string;
  state: string;
  exit_code: number;
  backend: string;
  stdout_tail: string;
  host: string;
}

describe.skipIf(!up)("MCP run_job on Slurm through the ext-tasks requester", () => {
  const box = up ? makeSandbox({ AWAITLESS_MCP_TASK_POLL_INTERVAL_MS: "200" }) : null;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  const slurmIds: string[] = [];
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    for (const c of cleanups.reverse()) await c();
    box?.remove();
  });

  test("run_job with backend slurm settles to completed with the job result inlined", async () => {
    const b = box!;
    writeFileSync(
      b.env.AWAITLESS_CONFIG!,
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${path.join(b.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const conn = await connectStdio("modern", b.env, b.root, "slurm-mcp-e2e");
    cleanups.push(conn.close);
    const session = createTaskSessionFromClient(conn.client, {
      endpointId: "awaitless-slurm-e2e",
      rawDispatch: conn.tap.rawDispatch,
      v2RequestFraming: v2Framing(conn.client),
    });
    cleanups.push(() => session.close());

    const call = await session.callTool("run_job", {
      command: ["sh", "-c", "echo working; sleep 2; echo slurm-task-$((6*7))"],
      backend: "slurm",
      host: "localhost",
      slurm_options: { mem: "32M" },
      client_request_id: "slurm-mcp-1",
    });
    expect(call.kind).toBe("task");
    if (call.kind !== "task") throw new Error(`expected a task, got ${call.kind}`);
    const taskId = call.serializeReference().taskId;
    expect(taskId).toMatch(/^job_/);

    // while it works, the job is a real Slurm job (squeue knows it by the ID we persisted)
    const getStatus = async () =>
      structured<{ state: string; backend: string; backend_id?: { slurm_job_id?: string } }>(
        await conn.client.callTool({ name: "get_job_status", arguments: { job_id: taskId } }),
      );
    expect((await getStatus()).backend).toBe("slurm");
    const slurmJobId = await slurmJobIdOf(getStatus);
    expect(slurmJobId).toMatch(/^\d+$/);
    slurmIds.push(slurmJobId);

    const settled = await call.settle();
    expect(settled.outcome.status).toBe("completed");
    const final = resultFromTaskOutcome(settled.outcome);
    const body = structured<RunJobResult>(final);
    expect(body.stdout_tail).toContain("slurm-task-42");
    expect(body.job_id).toBe(taskId);
    expect(body.state).toBe("succeeded");
    expect(body.exit_code).toBe(0);
    expect(body.backend).toBe("slurm");
    expect(body.stdout_tail).toContain("slurm-task-42");

    // sacct agrees with what the task reported
    const sacct = await run(["sacct", "-X", "-n", "-P", "-o", "State,ExitCode", "-j", slurmJobId]);
    expect(sacct.stdout.trim()).toBe("COMPLETED|0:0");

    // every Tasks message on the wire fits the extension's schema; the inlined result came through tasks/get
    let created = 0;
    let completedGets = 0;
    for (const entry of conn.tap.log) {
      const m = entry.message as {
        method?: string;
        result?: { resultType?: string; taskId?: string; status?: string };
      };
      if (m.method === "tasks/get") expect(await tasksSchemaIssues("GetTaskRequest", m)).toEqual([]);
      if (m.result?.resultType === "task") {
        created++;
        expect(await tasksSchemaIssues("CreateTaskResult", m.result)).toEqual([]);
      } else if (m.result?.taskId !== undefined) {
        expect(await tasksSchemaIssues("GetTaskResult", m.result)).toEqual([]);
        if (m.result.status === "completed") completedGets++;
      }
    }
    expect(created).toBe(1);
    expect(completedGets).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
