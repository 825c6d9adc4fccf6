// The tool surface through the official client, for both protocol generations, on the real service (local
// backend, temp data directory) with real commands; gated jobs print and end when the test releases them.

import { afterEach, describe, expect, test } from "bun:test";
import { until } from "../helpers/until.ts";
import { type Era, structured, textOf, waitFor } from "./harness.ts";
import { connectInProcess } from "./in-process.ts";
import { type RealService, realService } from "./real-service.ts";

type Conn = Awaited<ReturnType<typeof connectInProcess>>;
const open: Array<{ conn: Conn; real: RealService }> = [];

async function setup(era: Era, overrides = {}) {
  const real = realService();
  const conn = await connectInProcess(real.service, era, overrides);
  open.push({ conn, real });
  const { client } = conn;
  /** Submits a gated job (its other arguments as given): the test releases its output and its end. */
  const submit = async (args: Record<string, unknown> = {}) => {
    const gate = real.gate();
    const job = structured<{ job_id: string }>(
      await client.callTool({ name: "submit_job", arguments: { command: gate.command, ...args } }),
    );
    return {
      job_id: job.job_id,
      gate,
      write: (text: string) => gate.write(job.job_id, text),
      finish: (code: number) => gate.finish(job.job_id, code),
    };
  };
  const jobCount = async () => (await real.service.list({ limit: 10_000 })).length;
  return { real, client, conn, submit, jobCount };
}

afterEach(async () => {
  for (const { conn, real } of open.splice(0)) {
    await conn.close();
    await real.dispose();
  }
});

for (const era of ["legacy", "modern"] as const) {
  describe(`tools (${era})`, () => {
    test("lists the eleven tools, each saying when to use it and when not", async () => {
      const { client } = await setup(era);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          "cancel_job",
          "create_queue",
          "get_job_logs",
          "get_job_status",
          "list_jobs",
          "list_queues",
          "run",
          "run_job",
          "submit_job",
          "wait_for_completions",
          "wait_for_job",
        ].sort(),
      );
      for (const tool of tools) {
        expect(tool.description ?? "").toMatch(/Not |not for|Prefer /);
        expect(tool.inputSchema.type).toBe("object");
      }
      const run = tools.find((t) => t.name === "run")!;
      expect(Object.keys(run.inputSchema.properties ?? {})).toContain("inline_timeout_seconds");
      expect(run.inputSchema.required).toEqual(["command"]);
    });

    test("run returns a quick command's result inline, without a resource link (the result is all there)", async () => {
      const { client } = await setup(era);
      const result = await client.callTool({ name: "run", arguments: { command: ["sh", "-c", "exit 0"] } });
      const body = structured<{ delivery: string; wait_state: string; state: string }>(result);
      expect(body.delivery).toBe("inline");
      expect(body.wait_state).toBe("complete");
      expect(body.state).toBe("succeeded");
      expect(result.isError).toBeUndefined();
      expect(JSON.stringify(result.content)).not.toContain("resource_link");
      expect(body).not.toHaveProperty("next_command");
    });

    test("a failed job comes back as isError with its exit code in words", async () => {
      const { client } = await setup(era);
      const result = await client.callTool({ name: "run", arguments: { command: ["sh", "-c", "exit 3"] } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("failed with exit code 3");
    });

    test("run detaches after the inline window; wait_for_job collects the result", async () => {
      const { client, real } = await setup(era);
      const gate = real.gate();
      const detached = await client.callTool({
        name: "run",
        arguments: { command: gate.command, inline_timeout_seconds: 0.2 },
      });
      const body = structured<{ delivery: string; job_id: string; next_action: string }>(detached);
      expect(body.delivery).toBe("detached");
      expect(body.next_action).toContain(`wait_for_job with {"job_id":"${body.job_id}"}`);
      // A detached answer links the job it has not delivered yet.
      expect(JSON.stringify(detached.content)).toContain(`awaitless://jobs/${body.job_id}`);
      await gate.write(body.job_id, "all 12 tests passed\n");
      const waiting = client.callTool({ name: "wait_for_job", arguments: { job_id: body.job_id } });
      // wait_for_job's wait has started (run waited inside the service): the job ends while it holds
      await waitFor(() => (real.calls.includes("wait") ? true : undefined));
      await gate.finish(body.job_id, 0);
      const done = structured<{ wait_state: string; stdout_tail: string }>(await waiting);
      expect(done.wait_state).toBe("complete");
      expect(done.stdout_tail).toContain("all 12 tests passed");
      expect(JSON.stringify((await waiting).content)).not.toContain("resource_link");
    });

    test("a held wait sends progress and ends at the hold budget with client_timeout; the job keeps running", async () => {
      const { client, real, submit } = await setup(era, { holdBudgetMs: 1_200, progressIntervalMs: 150 });
      const submitted = await submit();
      await submitted.write("epoch 1\n");
      // the wrapper's heartbeat counts the output at its next check (seconds later): wait until it has
      await until("the heartbeat to count the output", async () => {
        const st = await real.service.status(submitted.job_id);
        return st.stdout_bytes > 0 && st.last_output_at !== null && st.last_output_at !== st.started_at;
      });
      const messages: string[] = [];
      const result = await client.callTool(
        { name: "wait_for_job", arguments: { job_id: submitted.job_id } },
        { onprogress: (p) => messages.push(p.message ?? "") },
      );
      const body = structured<{ wait_state: string; state: string; next_action: string }>(result);
      expect(body.wait_state).toBe("client_timeout");
      expect(body.state).toBe("running");
      expect(body.next_action).toContain(`Call wait_for_job with {"job_id":"${submitted.job_id}"}`);
      expect(messages.length).toBeGreaterThanOrEqual(3);
      expect(messages.at(-1)).toMatch(/^running \S+, last output \S+ ago/);
      expect((await real.service.status(submitted.job_id)).state).toBe("running");
    });

    test("a held wait's progress comes from the wait's own look: the server makes no status call of its own", async () => {
      const { client, real, submit } = await setup(era, { holdBudgetMs: 1_500, progressIntervalMs: 150 });
      const submitted = await submit();
      const start = real.calls.length;
      let end = start;
      const messages: string[] = [];
      const result = await client.callTool(
        { name: "wait_for_job", arguments: { job_id: submitted.job_id } },
        {
          onprogress: (p) => {
            messages.push(p.message ?? "");
            end = real.calls.length;
          },
        },
      );
      expect(structured<{ wait_state: string }>(result).wait_state).toBe("client_timeout");
      expect(messages.length).toBeGreaterThanOrEqual(3);
      for (const message of messages) expect(message).toMatch(/^running \S+, /);
      // the service calls while progress went out: the wait itself, nothing that looks at the job again
      expect(real.calls.slice(start, end)).toEqual(["wait"]);
    });

    test("a bare sleep is refused with the way to wait instead", async () => {
      const { client, jobCount } = await setup(era);
      for (const command of [
        ["sleep", "30"],
        ["sh", "-c", "sleep 30"],
        ["/bin/sleep", "5m"],
      ]) {
        const result = await client.callTool({ name: "run", arguments: { command } });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toContain("wait_for_job");
        expect(structured<{ error: { code: string } }>(result).error.code).toBe("invalid_argument");
      }
      expect(await jobCount()).toBe(0);
    });

    test("an identical active command is not launched twice unless allow_duplicate", async () => {
      const { client, real, submit, jobCount } = await setup(era);
      const first = await submit({ cwd: real.root });
      const again = await client.callTool({
        name: "submit_job",
        arguments: { command: first.gate.command, cwd: real.root },
      });
      expect(again.isError).toBe(true);
      expect(structured<{ error: { code: string; job_id: string } }>(again).error).toMatchObject({
        code: "duplicate_active_job",
        job_id: first.job_id,
      });
      expect(textOf(again)).toContain(`wait_for_job with {"job_id":"${first.job_id}"}`);
      const forced = await client.callTool({
        name: "submit_job",
        arguments: { command: first.gate.command, cwd: real.root, allow_duplicate: true },
      });
      expect(forced.isError).toBeUndefined();
      expect(await jobCount()).toBe(2);
    });

    test("a client_request_id retry is an idempotent replay, not a duplicate", async () => {
      const { client, real, jobCount } = await setup(era);
      const args = { command: real.gate().command, client_request_id: "tests-1" };
      const first = structured<{ job_id: string }>(
        await client.callTool({ name: "submit_job", arguments: args }),
      );
      const retry = await client.callTool({ name: "submit_job", arguments: args });
      expect(retry.isError).toBeUndefined();
      expect(structured<{ job_id: string; idempotent_replay: boolean }>(retry)).toMatchObject({
        job_id: first.job_id,
        idempotent_replay: true,
      });
      expect(await jobCount()).toBe(1);
    });

    test("unknown job IDs point at list_jobs; empty lists and logs say so in words", async () => {
      const { client, submit } = await setup(era);
      const unknown = await client.callTool({ name: "get_job_status", arguments: { job_id: "job_NOPE" } });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toContain("list_jobs");
      const empty = await client.callTool({ name: "list_jobs", arguments: { state: "active" } });
      expect(textOf(empty)).toContain("No jobs match (state=active)");
      expect(structured(empty)).toEqual({ jobs: [], count: 0 });
      const job = await submit();
      const logs = await client.callTool({ name: "get_job_logs", arguments: { job_id: job.job_id } });
      expect(textOf(logs)).toContain("stdout: no output yet");
    });

    test("status, logs, cancel and list report the job", async () => {
      const { client, submit } = await setup(era);
      const job = await submit({ name: "srv" });
      await job.write("listening on 8080\n");
      expect(
        textOf(await client.callTool({ name: "get_job_status", arguments: { job_id: job.job_id } })),
      ).toContain("running");
      const logs = await client.callTool({
        name: "get_job_logs",
        arguments: { job_id: job.job_id, stream: "stdout" },
      });
      expect(structured<{ stdout: string }>(logs).stdout).toContain("listening on 8080");
      expect(textOf(logs)).toContain("lines 1–1");
      const cancelled = await client.callTool({ name: "cancel_job", arguments: { job_id: job.job_id } });
      expect(structured<{ cancel_requested: boolean }>(cancelled).cancel_requested).toBe(true);
      const listed = structured<{ jobs: Array<{ name: string; state: string }> }>(
        await client.callTool({ name: "list_jobs", arguments: {} }),
      );
      expect(listed.jobs).toEqual([expect.objectContaining({ name: "srv", state: "cancelled" })]);
    });

    test("wait_for_completions returns finished jobs and a cursor that advances", async () => {
      const { client, submit } = await setup(era);
      const jobs = [await submit(), await submit()];
      const ids = jobs.map((j) => j.job_id);
      await jobs[1]!.finish(0);
      const first = structured<{
        completions: Array<{ job_id: string }>;
        next_cursor: string;
        active_job_ids: string[];
      }>(await client.callTool({ name: "wait_for_completions", arguments: { job_ids: ids } }));
      expect(first.completions.map((c) => c.job_id)).toEqual([ids[1]!]);
      expect(first.active_job_ids).toEqual([ids[0]!]);
      const pending = client.callTool({
        name: "wait_for_completions",
        arguments: { job_ids: ids, after_cursor: first.next_cursor },
      });
      await jobs[0]!.finish(1);
      const second = await pending;
      expect(
        structured<{ completions: Array<{ job_id: string }> }>(second).completions.map((c) => c.job_id),
      ).toEqual([ids[0]!]);
      expect(textOf(second)).toContain("All selected jobs have finished.");
    });

    test("invalid arguments name the argument", async () => {
      const { client } = await setup(era);
      const result = await client.callTool({ name: "run_job", arguments: { command: ["make"] } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("client_request_id is required");
    });
  });
}
