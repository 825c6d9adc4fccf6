// The dashboard's array and attempt reads in process over the real job service: /api/arrays/ID and its cancel
// (behind the token header), tasks marked and addressed as ARRAY_ID.INDEX, a retried job's attempts over the feed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { JobStatus } from "../../src/core/model/service-api.ts";
import { startUi, type UiServer } from "../../src/ui/server.ts";
import { type RealService, realService } from "../mcp/real-service.ts";
import { raw, readEvents } from "./http.ts";

let real: RealService;
let ui: UiServer;
const auth = () => ({ "x-awaitless-token": ui.token });

beforeAll(() => {
  real = realService();
  ui = startUi(real.service, { rescanMs: 200 });
});
afterAll(async () => {
  await ui.stop();
  await real.dispose();
});

describe("arrays and attempts", () => {
  test("an array: its page's read, tasks marked in the listing, task addresses, its ID refused where one job is meant", async () => {
    const arrays = real.service.arrays!;
    const a = await arrays.submit(
      { argv: ["sh", "-c", 'exit "$AWAITLESS_ARRAY_INDEX"'], name: "arr-api" },
      "0-2",
    );
    await arrays.wait(a.job_id, { timeoutMs: 30_000 });
    const d = await raw(ui.port, "GET", `/api/arrays/${a.job_id}`, auth());
    expect(d.status).toBe(200);
    const v = JSON.parse(d.body);
    expect([v.tasks, v.state, v.counts, v.failed_indices]).toEqual([
      3,
      "failed",
      { succeeded: 1, failed: 2 },
      [1, 2],
    ]);
    expect(v.task_list.map((t: { index: number; exit_code: number }) => [t.index, t.exit_code])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
    // listed as one entry with the array's own counts; its tasks are not listed as jobs
    const listed = JSON.parse((await raw(ui.port, "GET", "/api/jobs?name=arr-api", auth())).body);
    expect(listed.jobs).toEqual([]);
    expect(
      listed.arrays.map(
        (e: { kind: string; job_id: string; done: number; tasks: number; counts: object }) => [
          e.kind,
          e.job_id,
          e.done,
          e.tasks,
          e.counts,
        ],
      ),
    ).toEqual([["array", a.job_id, 3, 3, { succeeded: 1, failed: 2 }]]);
    const found = JSON.parse((await raw(ui.port, "GET", `/api/jobs?q=${a.job_id}`, auth())).body);
    expect([found.jobs.length, found.arrays.map((e: { job_id: string }) => e.job_id)]).toEqual([
      0,
      [a.job_id],
    ]);
    // a state filter keeps an array with a task in that state
    const failed = JSON.parse(
      (await raw(ui.port, "GET", "/api/jobs?state=failed&name=arr-api", auth())).body,
    );
    expect(failed.arrays.map((e: { job_id: string }) => e.job_id)).toEqual([a.job_id]);
    const queued = JSON.parse(
      (await raw(ui.port, "GET", "/api/jobs?state=queued&name=arr-api", auth())).body,
    );
    expect(queued.arrays).toEqual([]);
    // the array's own ID as a job: says it is an array; ARRAY.INDEX is that task's job
    expect(JSON.parse((await raw(ui.port, "GET", `/api/jobs/${a.job_id}`, auth())).body)).toEqual({
      kind: "array",
      array_id: a.job_id,
    });
    const task = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${a.job_id}.2`, auth())).body);
    expect([task.kind, task.job.job_id, task.job.array_task, task.job.exit_code]).toEqual([
      "job",
      v.task_list[2].job_id,
      `${a.job_id}.2`,
      2,
    ]);
    const logs = await raw(ui.port, "GET", `/api/jobs/${a.job_id}/logs`, auth());
    expect(logs.status).toBe(400);
    expect(JSON.parse(logs.body).error.hint).toContain(`${a.job_id}.INDEX`);
    expect((await raw(ui.port, "GET", `/api/arrays/${v.task_list[0].job_id}`, auth())).status).toBe(404);
    expect((await raw(ui.port, "GET", `/api/jobs/${a.job_id}.9`, auth())).status).toBe(404);
  });

  test("submit again on a task: a standalone job with the task's index env, outside the array's queue, said so", async () => {
    const arrays = real.service.arrays!;
    const a = await arrays.submit(
      { argv: ["sh", "-c", 'echo "index $AWAITLESS_ARRAY_INDEX of $AWAITLESS_ARRAY_ID"'], name: "again-api" },
      "0-1%1",
    );
    await arrays.wait(a.job_id, { timeoutMs: 30_000 });
    const r = await raw(ui.port, "POST", `/api/jobs/${a.job_id}.1/submit-again`, auth());
    expect(r.status).toBe(200);
    const again = JSON.parse(r.body);
    expect(again.from_array_task).toBe(`${a.job_id}.1`);
    await real.service.wait(again.job_id, { timeoutMs: 30_000 });
    const st = await real.service.status(again.job_id);
    expect([st.state, st.queue]).toEqual(["succeeded", null]);
    expect((await real.service.logs({ job_id: again.job_id, stream: "stdout" })).stdout).toBe(
      `index 1 of ${a.job_id}\n`,
    );
    // not a task of the array: its counts and tasks are as before; its page says where it came from
    const v = await arrays.status(a.job_id);
    expect([v.tasks, v.counts, v.task_list.map((t) => t.job_id).includes(again.job_id)]).toEqual([
      2,
      { succeeded: 2 },
      false,
    ]);
    const d = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${again.job_id}`, auth())).body);
    expect([d.from_array_task, d.job.array_task]).toEqual([`${a.job_id}.1`, undefined]);
    // a task's own page is the task (no from_array_task); a plain job's submit again says nothing of arrays
    const task = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${a.job_id}.1`, auth())).body);
    expect(task.from_array_task).toBeUndefined();
    const plain = JSON.parse(
      (await raw(ui.port, "POST", `/api/jobs/${again.job_id}/submit-again`, auth())).body,
    );
    expect(plain.from_array_task).toBeUndefined();
    await real.service.wait(plain.job_id, { timeoutMs: 30_000 });
  });

  test("cancel of an array is a POST with the token header; it cancels every task not ended", async () => {
    const arrays = real.service.arrays!;
    const gate = real.gate();
    const a = await arrays.submit({ argv: gate.command }, "0-3%2");
    const cookieOnly = await raw(ui.port, "POST", `/api/arrays/${a.job_id}/cancel`, {
      cookie: `awaitless_ui_token=${ui.token}`,
    });
    expect(cookieOnly.status).toBe(401);
    expect((await arrays.status(a.job_id)).counts.cancelled).toBeUndefined();
    const c = await raw(ui.port, "POST", `/api/arrays/${a.job_id}/cancel`, auth());
    expect(c.status).toBe(200);
    const r = JSON.parse(c.body);
    expect([r.cancel_requested, r.already_terminal]).toEqual([4, 0]);
    const w = await arrays.wait(a.job_id, { timeoutMs: 30_000 });
    expect([w.state, w.cancelled_indices]).toEqual(["cancelled", [0, 1, 2, 3]]);
    gate.end(0);
  });

  test("a retried job's detail carries its attempts, each with its own result; the feed sends each new attempt", async () => {
    const counter = join(real.root, "attempt-counter");
    const sub = await real.service.submit({
      argv: [
        "sh",
        "-c",
        'n=$(cat "$1" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$1"; echo "run $n"; [ $n -ge 2 ]',
        "r",
        counter,
      ],
      retries: 1,
      retry_on: ["exit"],
      retry_backoff_seconds: 0.1,
    });
    const attempts: number[] = [];
    await readEvents(`${ui.url}api/events`, auth(), (event, data) => {
      const j =
        event === "snapshot"
          ? (data as { jobs: JobStatus[] }).jobs.find((x) => x.job_id === sub.job_id)
          : (data as JobStatus);
      if (j?.job_id === sub.job_id && j.attempt !== undefined && attempts.at(-1) !== j.attempt)
        attempts.push(j.attempt);
      return j?.job_id === sub.job_id && j.state === "succeeded";
    });
    expect(attempts.at(-1)).toBe(2);
    const d = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${sub.job_id}`, auth())).body);
    expect([d.job.attempt, d.job.attempts]).toEqual([2, 2]);
    expect(
      d.attempt_history.map((a: { attempt: number; state: string; exit_code: number }) => [
        a.attempt,
        a.state,
        a.exit_code,
      ]),
    ).toEqual([[1, "failed", 1]]);
    expect(d.attempt_history[0].result.stdout_tail).toBe("run 1\n");
  });
});
