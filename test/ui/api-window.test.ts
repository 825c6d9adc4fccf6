// The dashboard's window of the newest 500 jobs counts jobs and arrays, not tasks: a 1,000-task array is one entry
// (its own counts) beside 50 other jobs, in /api/jobs and in the feed, which still sends each task's end live.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ArrayEntry } from "../../src/core/model/array-views.ts";
import type { JobStatus } from "../../src/core/model/service-api.ts";
import { startUi, type UiServer } from "../../src/ui/server.ts";
import { waitFor } from "../mcp/harness.ts";
import { type RealService, realService } from "../mcp/real-service.ts";
import { raw, readEvents } from "./http.ts";

/** Task 0 waits (bounded) for $1; every other task ends at once: the last task ends when the test says so. */
const TASK = [
  '[ "$AWAITLESS_ARRAY_INDEX" = 0 ] || exit 0;',
  'i=0; while [ ! -e "$1" ] && [ "$i" -lt 3000 ]; do i=$((i + 1)); sleep 0.1; done',
].join(" ");

let real: RealService;
let ui: UiServer;
let arrayId = "";
const others: string[] = [];
const auth = () => ({ "x-awaitless-token": ui.token });

beforeAll(async () => {
  real = realService();
  ui = startUi(real.service, { rescanMs: 200 });
  for (let i = 0; i < 50; i++)
    others.push(
      (await real.service.submit({ argv: ["true"], name: `other-${i}`, allow_duplicate: true })).job_id,
    );
  const a = await real.service.arrays!.submit(
    { argv: ["sh", "-c", TASK, "task", join(real.root, "end-0")], name: "big" },
    "0-999",
  );
  arrayId = a.job_id;
  await waitFor(
    async () => ((await real.service.arrays!.status(arrayId)).counts.succeeded === 999 ? true : undefined),
    120_000,
    "999 of the array's tasks ended",
  );
}, 300_000);
afterAll(async () => {
  if (arrayId) await real.service.arrays!.cancel(arrayId, 0);
  await ui?.stop();
  await real?.dispose();
}, 300_000);

describe("the 500-entry window with a 1,000-task array", () => {
  test("/api/jobs lists all 50 jobs and the array as one entry with its own counts", async () => {
    const r = await raw(ui.port, "GET", "/api/jobs", auth());
    expect(r.status).toBe(200);
    const { jobs, arrays, total } = JSON.parse(r.body) as {
      jobs: JobStatus[];
      arrays: ArrayEntry[];
      total: number;
    };
    expect(jobs.map((j) => j.job_id).sort()).toEqual([...others].sort());
    expect(arrays.map((a) => [a.kind, a.job_id, a.tasks, a.name])).toEqual([["array", arrayId, 1000, "big"]]);
    const counted = Object.values(arrays[0]!.counts).reduce((x, y) => x + (y ?? 0), 0);
    expect(counted).toBe(1000);
    expect(total).toBe(51);
    // the array's page still has every task
    const page = JSON.parse((await raw(ui.port, "GET", `/api/arrays/${arrayId}`, auth())).body);
    expect(page.task_list).toHaveLength(1000);
  }, 120_000);

  test("the feed's snapshot has the same window; a task's end comes live as the array's entry", async () => {
    let released = false;
    const seen = await readEvents(
      `${ui.url}api/events`,
      auth(),
      (event, data) => {
        if (event === "snapshot") {
          const d = data as { jobs: JobStatus[]; arrays: ArrayEntry[] };
          expect(d.jobs.length).toBe(50);
          expect(d.arrays.map((a) => a.job_id)).toEqual([arrayId]);
          expect(d.arrays[0]!.counts).toEqual({ succeeded: 999, running: 1 });
          writeFileSync(join(real.root, "end-0"), "");
          released = true;
          return false;
        }
        const a = data as ArrayEntry;
        return event === "array" && a.job_id === arrayId && a.counts.succeeded === 1000;
      },
      60_000,
    );
    expect(released).toBe(true);
    const last = seen.at(-1)!.data as ArrayEntry;
    expect([last.done, last.tasks, last.state, last.failed_indices]).toEqual([1000, 1000, "succeeded", []]);
    // a task's own job is never sent as a job of the list
    const taskIds = new Set((await real.service.arrays!.status(arrayId)).task_list.map((t) => t.job_id));
    expect(seen.filter((e) => e.event === "job" && taskIds.has((e.data as JobStatus).job_id))).toEqual([]);
  }, 120_000);
});
