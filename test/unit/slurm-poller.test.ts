// The shared scheduler rounds: the store's lease and snapshot (SchedulerRounds), and pollers in two "processes" (two
// store connections, two runners) that between them ask a fake scheduler once per interval; the floor and the backoff.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRunner, ExecOptions, RunResult } from "../../src/backends/slurm/runner.ts";
import { callsPerMinute, slurmPacing } from "../../src/backends/slurm/slurm-pacing.ts";
import { SlurmPoller } from "../../src/backends/slurm/slurm-poller.ts";
import { submitBatch } from "../../src/backends/slurm/slurm-submit.ts";
import { loadConfig } from "../../src/config/config.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";
import { JobStore } from "../../src/core/store/job-store.ts";

const dirs: string[] = [];
const stores: JobStore[] = [];
afterAll(() => {
  for (const s of stores) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "awl-poller-"));
  dirs.push(d);
  return d;
}
function open(dir: string): JobStore {
  const s = JobStore.open(dir);
  stores.push(s);
  return s;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A scheduler that knows every job it is asked about as RUNNING; counts its calls; can fail or answer slowly. */
class FakeScheduler implements CommandRunner {
  readonly label = "fake";
  readonly isLocal = true;
  readonly calls: { program: string; ids: string[]; atMs: number }[] = [];
  fail = false;
  delayMs = 0;

  async exec(argv: readonly string[], _opts: ExecOptions): Promise<RunResult> {
    const program = argv[0] ?? "";
    if (program === "sbatch")
      throw new AwaitlessError("connection_failed", "the connection dropped", "retry");
    const jobs = argv.find((a) => a.startsWith("--jobs=")) ?? "--jobs=";
    const ids = [...new Set(jobs.slice("--jobs=".length).split(",").filter(Boolean))];
    this.calls.push({ program, ids, atMs: Date.now() });
    if (this.delayMs > 0) await sleep(this.delayMs);
    if (this.fail) return { code: 1, stdout: "", stderr: "slurm_load_jobs error: Socket timed out" };
    const line = (id: string) =>
      program === "squeue"
        ? `${id}|RUNNING|None|awl-x|awaitless:job_x`
        : `${id}|RUNNING|0:0|None|2026-12-01T10:00:00|2026-12-01T10:00:01|Unknown|awl-x|awaitless:job_x`;
    return { code: 0, stdout: ids.map(line).join("\n"), stderr: "" };
  }
  rounds(sinceMs = 0): number {
    return this.calls.filter((c) => c.program === "squeue" && c.atMs >= sinceMs).length;
  }
  homeDir = async () => "/nonexistent";
  mkdirp = async () => undefined;
  writeFile = async () => undefined;
  readFile = async () => null;
  readonly files = {
    readTail: async () => ({ bytes: new Uint8Array(0), totalBytes: 0, droppedBytes: 0 }),
    scanLog: async () => {
      throw new Error("unused");
    },
    collectArtifacts: async () => [],
    remove: async () => undefined,
  };
  close(): void {}
}

function poller(store: JobStore | null, runner: CommandRunner, intervalMs: number, floorMs = intervalMs) {
  return new SlurmPoller(runner, {
    intervalMs,
    minIntervalMs: floorMs,
    callTimeoutMs: 1000,
    ...(store ? { shared: { rounds: store.rounds, key: "slurm:cl" } } : {}),
  });
}

describe("SchedulerRounds (the store's lease and snapshot)", () => {
  test("one lease at a time; the holder's claim returns the union of every process's interests", () => {
    const dir = tempDir();
    const a = open(dir).rounds;
    const b = open(dir).rounds;
    const now = Date.now();
    b.registerInterest("k", "B", [{ item: "12", sinceMs: now - 5000 }], now + 60_000);
    const got = a.claimRound("k", "A", {
      nowMs: now,
      leaseMs: 10_000,
      seenAtMs: null,
      mine: [{ item: "11", sinceMs: now - 1000 }],
      mineUntilMs: now + 60_000,
    });
    expect(got).toEqual([
      { item: "11", sinceMs: now - 1000 },
      { item: "12", sinceMs: now - 5000 },
    ]);
    // B cannot take the round while A's lease runs
    expect(
      b.claimRound("k", "B", { nowMs: now + 1, leaseMs: 10_000, seenAtMs: null, mine: [], mineUntilMs: 0 }),
    ).toBe(null);
    expect(
      a.publishRound("k", "A", {
        atMs: now,
        nextAtMs: now + 15_000,
        snapshot: '{"ids":["11","12"],"rows":[]}',
      }),
    ).toBe(true);
    const r = b.round("k");
    expect(r?.holder).toBe(null);
    expect(r?.atMs).toBe(now);
    expect(r?.snapshot).toContain('"12"');
    // a claim made with an older view of the rounds is refused: read the newer snapshot first
    expect(
      b.claimRound("k", "B", { nowMs: now + 2, leaseMs: 1, seenAtMs: null, mine: [], mineUntilMs: 0 }),
    ).toBe(null);
    expect(
      b.claimRound("k", "B", { nowMs: now + 2, leaseMs: 1, seenAtMs: now, mine: [], mineUntilMs: 0 }),
    ).not.toBe(null);
  });

  test("a holder that died is replaced once its lease expires; its late snapshot does not overwrite a newer one", () => {
    const dir = tempDir();
    const a = open(dir).rounds;
    const b = open(dir).rounds;
    const now = Date.now();
    const claim = (r: typeof a, owner: string, at: number) =>
      r.claimRound("k", owner, {
        nowMs: at,
        leaseMs: 1000,
        seenAtMs: null,
        mine: [],
        mineUntilMs: at + 60_000,
      });
    expect(claim(a, "A", now)).not.toBe(null);
    expect(claim(b, "B", now + 999)).toBe(null);
    expect(claim(b, "B", now + 1001)).not.toBe(null);
    expect(b.publishRound("k", "B", { atMs: now + 1001, nextAtMs: now + 2001, snapshot: "{}" })).toBe(true);
    expect(a.publishRound("k", "A", { atMs: now, nextAtMs: now + 1000, snapshot: "{}" })).toBe(false);
    expect(a.round("k")?.atMs).toBe(now + 1001);
  });

  test("expired and dropped interests leave the union", () => {
    const dir = tempDir();
    const a = open(dir).rounds;
    const now = Date.now();
    a.registerInterest("k", "A", [{ item: "1", sinceMs: now }], now + 10);
    a.registerInterest("k", "B", [{ item: "2", sinceMs: now }], now + 60_000);
    a.registerInterest("k", "B", [{ item: "3", sinceMs: now }], now + 60_000);
    a.dropInterest("k", "B", ["3"]);
    expect(a.watchers("k", now)).toBe(2);
    const got = a.claimRound("k", "C", {
      nowMs: now + 100,
      leaseMs: 1,
      seenAtMs: null,
      mine: [],
      mineUntilMs: 0,
    });
    expect(got?.map((i) => i.item)).toEqual(["2"]);
  });
});

describe("one poller per cluster per machine", () => {
  test("a fresh round another process ran answers this one without a call", async () => {
    const dir = tempDir();
    const runA = new FakeScheduler();
    const runB = new FakeScheduler();
    const a = poller(open(dir), runA, 5000, 5000);
    const b = poller(open(dir), runB, 5000, 5000);
    try {
      const sa = await a.view("101", Date.now());
      expect(sa.rows.get("101")?.squeue?.slurmState).toBe("RUNNING");
      const sb = await b.view("101", Date.now());
      expect(sb.rows.get("101")?.sacct?.slurmState).toBe("RUNNING");
      expect(runA.rounds()).toBe(1);
      expect(runB.calls).toEqual([]);
    } finally {
      a.close();
      b.close();
    }
  });

  test("two processes waiting on different jobs share one round per interval, each round asking for both", async () => {
    const dir = tempDir();
    const runA = new FakeScheduler();
    const runB = new FakeScheduler();
    const interval = 300;
    const a = poller(open(dir), runA, interval);
    const b = poller(open(dir), runB, interval);
    try {
      await Promise.all([a.view("201", Date.now()), b.view("202", Date.now())]);
      const since = Date.now();
      const wait = async (p: SlurmPoller, id: string) => {
        for (let i = 0; i < 8; i++) {
          await p.waitForPoll(id, since, 2 * interval);
          await p.view(id, since);
        }
      };
      await Promise.all([wait(a, "201"), wait(b, "202")]);
      const elapsed = Date.now() - since;
      const rounds = runA.rounds(since) + runB.rounds(since);
      expect(rounds).toBeGreaterThanOrEqual(4);
      // one process alone would make these many rounds; two sharing the store make no more
      expect(rounds).toBeLessThanOrEqual(Math.ceil(elapsed / interval) + 1);
      for (const c of [...runA.calls, ...runB.calls].filter((x) => x.atMs >= since))
        expect(c.ids.sort()).toEqual(["201", "202"]);
    } finally {
      a.close();
      b.close();
    }
  });

  test("without the store two processes make a round each per interval (the cost sharing removes)", async () => {
    const runA = new FakeScheduler();
    const runB = new FakeScheduler();
    const interval = 300;
    const a = poller(null, runA, interval);
    const b = poller(null, runB, interval);
    try {
      const since = Date.now();
      const wait = async (p: SlurmPoller, id: string) => {
        await p.view(id, since);
        for (let i = 0; i < 6; i++) {
          await p.waitForPoll(id, since, 2 * interval);
          await p.view(id, since);
        }
      };
      await Promise.all([wait(a, "301"), wait(b, "302")]);
      expect(runA.rounds(since)).toBeGreaterThanOrEqual(6);
      expect(runB.rounds(since)).toBeGreaterThanOrEqual(6);
    } finally {
      a.close();
      b.close();
    }
  });

  test("a dead lease holder is replaced once its lease expires", async () => {
    const dir = tempDir();
    const store = open(dir);
    const now = Date.now();
    // a process took the round's lease and died before writing its snapshot
    store.rounds.claimRound("slurm:cl", "dead", {
      nowMs: now,
      leaseMs: 600,
      seenAtMs: null,
      mine: [{ item: "401", sinceMs: now }],
      mineUntilMs: now + 60_000,
    });
    const run = new FakeScheduler();
    const p = poller(open(dir), run, 100);
    try {
      const s = await p.view("401", now);
      expect(s.rows.get("401")?.squeue?.slurmState).toBe("RUNNING");
      expect(run.calls[0]!.atMs).toBeGreaterThanOrEqual(now + 600);
      expect(store.rounds.round("slurm:cl")?.holder).toBe(null);
    } finally {
      p.close();
    }
  });
});

describe("scheduler etiquette", () => {
  test("a new job's round waits for the floor after the last round", async () => {
    const run = new FakeScheduler();
    const p = poller(open(tempDir()), run, 5000, 400);
    try {
      expect(p.answerableNow("501", Date.now())).toBe(true); // no round yet: one may start now
      await p.view("501", Date.now());
      // the floor keeps a round for a new job away (a launch answers without waiting for it)
      expect(p.answerableNow("502", Date.now())).toBe(false);
      expect(p.answerableNow("501", Date.now())).toBe(true);
      await p.view("502", Date.now());
      expect(run.rounds()).toBe(2);
      expect(run.calls[2]!.atMs - run.calls[0]!.atMs).toBeGreaterThanOrEqual(400);
      expect(run.calls[2]!.ids.sort()).toEqual(["501", "502"]);
      // a job the fresh round covers costs nothing more
      await p.view("501", Date.now());
      expect(run.rounds()).toBe(2);
    } finally {
      p.close();
    }
  });

  test("after a lost sbatch reply, the looks for the job by its tag keep the floor between them", async () => {
    const run = new FakeScheduler();
    const out = await submitBatch(
      run,
      "#!/bin/sh\ntrue\n",
      { jobId: "job_01TEST" },
      {
        timeoutMs: 1000,
        adoptWindowMs: 1000,
        since: new Date(),
        minPauseMs: 400,
      },
    );
    expect(out.adopted).toBe(false);
    expect(out.unconfirmed).toContain("the connection dropped");
    const looks = run.calls.filter((c) => c.program === "squeue");
    expect(looks.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < looks.length; i++)
      expect(looks[i]!.atMs - looks[i - 1]!.atMs).toBeGreaterThanOrEqual(400);
  });

  test("errors double the interval up to the ceiling; an answer restores it", async () => {
    const run = new FakeScheduler();
    const p = new SlurmPoller(run, { intervalMs: 100, maxIntervalMs: 350, callTimeoutMs: 1000 });
    try {
      run.fail = true;
      const first = await p.view("601", Date.now());
      expect(first.error).toContain("Socket timed out");
      expect(p.currentIntervalMs).toBe(200);
      await p.waitForPoll("601", 0, 5000);
      expect(p.currentIntervalMs).toBe(350);
      run.fail = false;
      await p.waitForPoll("601", 0, 5000);
      expect(p.currentIntervalMs).toBe(100);
    } finally {
      p.close();
    }
  });

  test("a slow answer stretches the interval to twice the time it took", async () => {
    const run = new FakeScheduler();
    run.delayMs = 150;
    const p = new SlurmPoller(run, { intervalMs: 100, maxIntervalMs: 10_000, callTimeoutMs: 1000 });
    try {
      await p.view("701", Date.now());
      expect(p.currentIntervalMs).toBeGreaterThanOrEqual(300);
    } finally {
      p.close();
    }
  });

  test("the backoff is shared: another process reads it from the store and waits it out too", async () => {
    const dir = tempDir();
    const runA = new FakeScheduler();
    const runB = new FakeScheduler();
    runA.fail = true;
    const a = poller(open(dir), runA, 200);
    const b = poller(open(dir), runB, 200);
    try {
      await a.view("801", Date.now());
      const s = await b.view("801", Date.now());
      expect(s.error).toContain("squeue failed");
      expect(runB.calls).toEqual([]);
      expect(b.currentIntervalMs).toBe(400);
    } finally {
      a.close();
      b.close();
    }
  });

  test("[hosts.NAME] over [defaults]; the floor raises an inherited interval; calls per minute follow", () => {
    const dir = tempDir();
    const cfg = join(dir, "config.toml");
    const write = (text: string) => writeFileSync(cfg, text);
    write(
      "[defaults]\nslurm_poll_interval_seconds = 20\n[hosts.big]\nslurm_min_poll_interval_seconds = 60\n[hosts.fast]\nslurm_poll_interval_seconds = 6\n",
    );
    const c = loadConfig({ AWAITLESS_CONFIG: cfg, HOME: dir });
    const d = {
      intervalMs: c.defaults.slurm_poll_interval_seconds * 1000,
      floorMs: c.defaults.slurm_min_poll_interval_seconds * 1000,
    };
    expect(slurmPacing("big", c.hosts, d).intervalMs).toBe(60_000);
    expect(slurmPacing("fast", c.hosts, d)).toMatchObject({ intervalMs: 6000, floorMs: 5000 });
    expect(callsPerMinute(slurmPacing("other", c.hosts, d))).toEqual({ steady: 6, atMost: 24 });
    write("[hosts.fast]\nslurm_poll_interval_seconds = 2\n");
    expect(() => loadConfig({ AWAITLESS_CONFIG: cfg, HOME: dir })).toThrow(
      /\[hosts\.fast\] slurm_poll_interval_seconds = 2 is below the floor slurm_min_poll_interval_seconds = 5/,
    );
  });
});
