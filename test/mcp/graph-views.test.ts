// list_jobs and get_job_status show a job graph over MCP (the official client against the compiled server): a job
// held by `after` says which parent it waits for, a retried job its attempt, an array task its address and the
// array its progress (structured `arrays`, and in the text).
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { until } from "../helpers/until.ts";
import { structured, textOf } from "./harness.ts";
import { stdioSession } from "./stdio-client.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tools' structured answers
type Json = any;

describe("a job graph in list_jobs and get_job_status", () => {
  const session = stdioSession();
  const box = session.box;
  const call = (name: string, args: Record<string, unknown>) =>
    session.conn!.client.callTool({ name, arguments: args });

  test("dependencies, attempts and array progress", async () => {
    const go = join(box.root, "go");
    const held = `echo held; while [ ! -e '${go}' ]; do sleep 0.05; done`;
    const parent = structured<Json>(await call("submit_job", { command: held })).job_id as string;
    const child = structured<Json>(await call("submit_job", { command: ["true"], after: [parent] })).job_id;
    const retried = structured<Json>(
      await call("submit_job", { command: "exit 3", retries: 1, retry_on: ["exit"] }),
    ).job_id;
    const task = `[ "$AWAITLESS_ARRAY_INDEX" -lt 2 ] || { ${held}; }; [ "$AWAITLESS_ARRAY_INDEX" != 1 ]`;
    const arr = structured<Json>(await call("submit_job", { command: task, array: "0-3%2" }))
      .job_id as string;
    const listed = await until(
      "two tasks done, two running, the retry waiting",
      async () => {
        const r = await call("list_jobs", { limit: 50 });
        const s = structured<Json>(r);
        const a = s.arrays?.[0];
        const j = s.jobs.find((x: Json) => x.job_id === retried);
        return a?.done === 2 && a.counts.running === 2 && j?.attempt === 2 && j.next_attempt_at ? r : null;
      },
      30_000,
    );
    const s = structured<Json>(listed);
    expect(s.arrays[0]).toMatchObject({ job_id: arr, tasks: 4, done: 2, failed_indices: [1] });
    expect(s.jobs.filter((j: Json) => j.array_task?.startsWith(`${arr}.`)).length).toBe(4);
    const text = textOf(listed);
    const line = (id: string) => text.split("\n").find((l) => l.startsWith(id)) ?? "";
    expect(line(child)).toContain(`[waiting for ${parent} to succeed]`);
    expect(line(retried)).toMatch(
      /\[attempt 2 of 2; waiting for attempt 2 of 2 in about \d+s; attempt 1 failed/,
    );
    expect(text).toContain(
      `Array ${arr} (0-3%2) running: 2/4 done (1 succeeded, 1 failed), 2 running; failed indices 1`,
    );
    expect(text).toMatch(new RegExp(`\\[task ${arr}\\.0\\]`));
    expect(text).not.toMatch(/--[a-z]|awaitless /);

    expect(textOf(await call("get_job_status", { job_id: child }))).toContain(
      `waiting for ${parent} to succeed`,
    );
    const arrText = textOf(await call("get_job_status", { job_id: arr }));
    expect(arrText).toContain("4 tasks: 1 succeeded, 1 failed, 2 running; failed indices 1");

    writeFileSync(go, "");
    const w = structured<Json>(await call("wait_for_job", { job_id: arr, timeout_seconds: 60 }));
    expect(w).toMatchObject({ state: "failed", counts: { succeeded: 3, failed: 1 } });
    const done = await call("wait_for_job", { job_id: child, timeout_seconds: 60 });
    expect(structured<Json>(done).state).toBe("succeeded");
    await call("cancel_job", { job_id: retried });
    expect(textOf(await call("get_job_status", { job_id: retried }))).toContain(
      `Job ${retried} cancelled, attempt 2 of 2.`,
    );
    const st = textOf(await call("get_job_status", { job_id: child }));
    expect(st).toContain(`Job ${child} succeeded (exit 0)`);
  }, 90_000);
});
