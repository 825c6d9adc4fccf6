// One look at a job observes it once: status, a wait's progress lines and its answer read the observation the look's
// reconcile step made, instead of asking the backend again. A counting in-memory backend stands in for the wrapper.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BACKEND_CAPABILITIES } from "../../src/backends/capabilities.ts";
import { loadConfig } from "../../src/config/config.ts";
import { serviceSettings } from "../../src/context.ts";
import type { Backend, LogTail } from "../../src/core/backend/backend.ts";
import type { BackendId, Job } from "../../src/core/model/job.ts";
import type { ExitInfo, Observation } from "../../src/core/model/observation.ts";
import { JobService } from "../../src/core/service/job-service.ts";
import { JobStore } from "../../src/core/store/job-store.ts";

const root = mkdtempSync(join(tmpdir(), "awl-observe-once-"));
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

const startedAt = new Date().toISOString();
const lastOutputAt = new Date(Date.now() - 1000).toISOString();

/** A job's wrapper in memory: it started at once, wrote 5 bytes, and ends when `exit` is set. Counts every look. */
class CountingBackend implements Backend {
  readonly name = "local" as const;
  readonly capabilities = BACKEND_CAPABILITIES.local;
  observed = 0;
  watched = 0;
  exit: ExitInfo | null = null;
  /** The jobs core said the rules ended (Backend.ended), with the observation they ended on. */
  ends: [string, Observation][] = [];
  async launch(): Promise<BackendId> {
    return { wrapper_pid: 1, pid: 1, pgid: 1 };
  }
  async observe(): Promise<Observation> {
    this.observed += 1;
    return {
      started: { wrapper_pid: 1, pid: 1, pgid: 1, boot_id: null, started_at: startedAt },
      exit: this.exit,
      wrapperAlive: this.exit === null,
      bootIdNow: null,
      heartbeat: {
        at: new Date().toISOString(),
        last_change_at: lastOutputAt,
        stdout_bytes: 5,
        stderr_bytes: 0,
      },
    };
  }
  async ended(job: Job, observation: Observation): Promise<void> {
    this.ends.push([job.job_id, observation]);
  }
  async cancel(): Promise<void> {}
  async readTail(): Promise<LogTail> {
    return { bytes: new Uint8Array(), totalBytes: 0, droppedBytes: 0 };
  }
  scanLog(): never {
    throw new Error("not used here");
  }
  async collectArtifacts(): Promise<[]> {
    return [];
  }
  async secretValues(): Promise<Record<string, string>> {
    return {};
  }
  /** Nothing changes by itself here: waits out its slice (or the abort), watched by no events. */
  async waitForChange(_job: Job, timeoutMs: number, signal?: AbortSignal): Promise<undefined> {
    this.watched += 1;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      const stop = () => {
        clearTimeout(t);
        resolve();
      };
      signal?.addEventListener("abort", stop, { once: true });
    });
    return undefined;
  }
  async remove(): Promise<void> {}
}

const backend = new CountingBackend();
const service = new JobService(store, { local: backend }, serviceSettings(config, env));

let made = 0;
async function runningJob(): Promise<string> {
  made += 1;
  const { job_id } = await service.submit({ argv: ["sleep", String(made)], cwd: root });
  expect((await service.status(job_id)).state).toBe("running");
  return job_id;
}

test("status of a running job observes it once, and reports that observation's output counts", async () => {
  const id = await runningJob();
  backend.observed = 0;
  const st = await service.status(id);
  expect(backend.observed).toBe(1);
  expect(st.stdout_bytes).toBe(5);
  expect(st.last_output_at).toBe(lastOutputAt);
});

test("inspect is one look too: one observation for the job and its status", async () => {
  const id = await runningJob();
  backend.observed = 0;
  const seen = await service.inspect(id);
  expect(backend.observed).toBe(1);
  expect(seen.job.stdout_bytes).toBe(5);
});

test("a wait observes once per look: its progress lines and its answer read the look's observation", async () => {
  const id = await runningJob();
  backend.observed = 0;
  backend.watched = 0;
  const ctl = new AbortController();
  const lines: string[] = [];
  const answer = await service.wait(id, {
    timeoutMs: 120_000,
    progressIntervalMs: 20,
    signal: ctl.signal,
    onProgress: (line) => {
      lines.push(line);
      if (lines.length === 3) ctl.abort();
    },
  });
  expect(lines.length).toBe(3);
  for (const line of lines) expect(line).toMatch(/^running \S+, last output \S+ ago$/);
  expect(answer.status_message).toMatch(/^running \S+, last output \S+ ago$/);
  // one look to begin with, then one after each change watched for; progress ticks and the answer add none
  expect(backend.observed).toBe(backend.watched + 1);
});

test("a wait that ends pending tells how long the job has been quiet, read by its last look (no look more)", async () => {
  const id = await runningJob();
  backend.observed = 0;
  backend.watched = 0;
  const told: (number | undefined)[] = [];
  const answer = await service.wait(id, { timeoutMs: 100, onQuietSeconds: (s) => told.push(s) });
  expect(answer.delivery_state).toBe("pending");
  // once, and the silence since the heartbeat's last output (about 1 s before this file was loaded)
  expect(told.length).toBe(1);
  expect(told[0]!).toBeGreaterThanOrEqual(1);
  expect(told[0]!).toBeLessThan((Date.now() - Date.parse(lastOutputAt)) / 1000 + 0.001);
  expect(backend.observed).toBe(backend.watched + 1);
});

test("status of an ended job observes it no more; the backend is told of the end once, with its observation", async () => {
  const id = await runningJob();
  backend.exit = {
    exit_code: 0,
    signal: null,
    reason: "exited",
    finished_at: new Date().toISOString(),
    descendants_alive: false,
  };
  try {
    backend.observed = 0;
    expect((await service.status(id)).state).toBe("succeeded");
    expect(backend.observed).toBe(1);
    expect((await service.status(id)).state).toBe("succeeded");
    expect(backend.observed).toBe(1);
    expect(backend.ends.map(([job]) => job)).toEqual([id]);
    expect(backend.ends[0]![1].exit).toEqual(backend.exit);
  } finally {
    backend.exit = null;
  }
});
