// The live feed keeps a page's list equal to the listing: an array's task, listed as a job in the moment between its
// reservation and its link to the array, is forgotten once linked (it is counted in the array's entry), so applying
// the feed's events never leaves a task as a job row of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { JobStatus } from "../../src/core/model/service-api.ts";
import { startUi, type UiServer } from "../../src/ui/server.ts";
import { type RealService, realService } from "../mcp/real-service.ts";
import { readEvents } from "./http.ts";

let real: RealService;
let ui: UiServer;

beforeAll(() => {
  real = realService();
  // a listing every 20 ms: many of them fall while the array's tasks are being submitted
  ui = startUi(real.service, { rescanMs: 20 });
});
afterAll(async () => {
  await ui?.stop();
  await real?.dispose();
});

test("applying the feed's events leaves no array task among the jobs, whenever the listings fell", async () => {
  const jobs = new Set<string>();
  let arrayId = "";
  let submitted: Promise<void> | undefined;
  // Submitted once the array ended, and let end only once its ID is known: its end is sent from a listing made
  // after the array's, so when that event is here a forget still owed would have been sent before it.
  const marker = real.gate();
  let marked: Promise<void> | undefined;
  let markerId = "";
  await readEvents(
    `${ui.url}api/events`,
    { "x-awaitless-token": ui.token },
    (event, data) => {
      if (event === "snapshot") {
        for (const j of (data as { jobs: JobStatus[] }).jobs) jobs.add(j.job_id);
        submitted = real.service.arrays!.submit({ argv: ["true"], name: "sweep" }, "0-59").then((a) => {
          arrayId = a.job_id;
        });
      }
      if (event === "job") jobs.add((data as JobStatus).job_id);
      if (event === "forget") jobs.delete((data as { job_id: string }).job_id);
      if (event === "array" && arrayId && (data as { job_id: string; state: string }).state === "succeeded") {
        marked ??= real.service.submit({ argv: marker.command, name: "marker" }).then((r) => {
          markerId = r.job_id;
          marker.end(0);
        });
      }
      const job = data as JobStatus;
      return event === "job" && markerId !== "" && job.job_id === markerId && job.state === "succeeded";
    },
    60_000,
  );
  await marked;
  await submitted;
  const taskIds = new Set((await real.service.arrays!.status(arrayId)).task_list.map((t) => t.job_id));
  expect(taskIds.size).toBe(60);
  expect([...jobs].filter((id) => taskIds.has(id))).toEqual([]);
}, 90_000);
