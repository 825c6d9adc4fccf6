// A held wait on a quiet local job: while inotify watches the job and nothing changes, its re-reads back off from
// poll_interval to 10 s; without file events they stay at poll_interval. Asserts the slices the wait asked for.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config/config.ts";
import { createBackends, serviceSettings } from "../../src/context.ts";
import type { Backend } from "../../src/core/backend/backend.ts";
import { JobService, QUIET_POLL_MAX_MS } from "../../src/core/service/job-service.ts";
import { JobStore } from "../../src/core/store/job-store.ts";

const root = mkdtempSync(join(tmpdir(), "awl-wait-backoff-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, "config.toml"), "[defaults]\npoll_interval_seconds = 0.05\n");
const env = {
  ...process.env,
  HOME: root,
  AWAITLESS_DATA_DIR: join(root, "data"),
  AWAITLESS_CONFIG: join(root, "config.toml"),
};
const config = loadConfig(env);
const store = JobStore.open(config.dataDir);
const backends = createBackends(config, env, store);
const real = backends.local!;
// The service's local backend is a spy over the real one while `slices` runs (the service keeps its backends private).
let spy: Backend | null = null;
const local = new Proxy(real, {
  get(target, key) {
    const on = spy ?? target;
    const value = Reflect.get(on, key);
    return typeof value === "function" ? value.bind(on) : value;
  },
});
const service = new JobService(store, { ...backends, local }, serviceSettings(config, env));

/** Runs a wait of `ms` on a running job, recording each slice it asked the backend for. */
async function slices(ms: number, events: boolean): Promise<number[]> {
  const sub = await service.submit({ argv: ["sleep", "60"], cwd: root });
  // Running first: the start is a change, which would reset the back-off in the middle of the wait.
  for (let i = 0; i < 200 && (await service.status(sub.job_id)).state !== "running"; i++) await Bun.sleep(50);
  expect((await service.status(sub.job_id)).state).toBe("running");
  const asked: number[] = [];
  const watching: Backend = Object.create(real);
  watching.waitForChange = async (job, timeoutMs, signal, anyFile) => {
    asked.push(timeoutMs);
    const armed = await real.waitForChange(job, timeoutMs, signal, anyFile);
    return events ? armed : undefined;
  };
  spy = watching;
  try {
    await service.wait(sub.job_id, { timeoutMs: ms });
  } finally {
    spy = null;
    await service.cancel(sub.job_id, 0).catch(() => undefined);
  }
  return asked;
}

test("with file events a quiet job's re-reads double from poll_interval; without them they stay", async () => {
  const evented = await slices(2000, true);
  // 50, 100, 200, 400, 800 ms … (the last slice is cut by the wait's own deadline)
  expect(evented.length).toBeGreaterThanOrEqual(4);
  for (let i = 1; i < evented.length - 1; i++) {
    expect(evented[i]).toBe(Math.min(evented[i - 1]! * 2, QUIET_POLL_MAX_MS));
  }
  const polled = await slices(600, false);
  expect(polled.length).toBeGreaterThanOrEqual(4);
  for (const s of polled.slice(0, -1)) expect(s).toBe(50);
});
