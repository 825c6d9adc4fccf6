// The event path's parts that need no cluster: the local exit-record watch (inotify and its look), which hosts it is
// on for (slurm_watch, the runner), and the not-shared judgement from a round's line and the started record.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalRunner } from "../../src/backends/slurm/runner.ts";
import { confirmGapMs, localExitWatch, NOT_SHARED_AFTER_MS } from "../../src/backends/slurm/slurm-events.ts";
import { SlurmHost, slurmHostSettings } from "../../src/backends/slurm/slurm-host.ts";
import type { SlurmRow } from "../../src/backends/slurm/slurm-queries.ts";

const root = mkdtempSync(join(tmpdir(), "awl-slurm-events-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const hostWith = (extra: Record<string, unknown>) =>
  new SlurmHost(slurmHostSettings("cl", { cl: extra }), new LocalRunner("cl"), { intervalMs: 60_000 });

/** A sacct-style line: local time without a zone, as sacct prints it. */
const localTime = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
};
const running = (startMs: number): { squeue: SlurmRow; sacct: SlurmRow } => ({
  squeue: { slurmJobId: "7", slurmState: "RUNNING", name: "x" } as SlurmRow,
  sacct: { slurmJobId: "7", slurmState: "RUNNING", name: "x", start: localTime(startMs) } as SlurmRow,
});

describe("localExitWatch", () => {
  test("resolves when the exit record is written (well before its timeout)", async () => {
    const dir = join(root, "a");
    mkdirSync(dir);
    let done = false;
    const w = localExitWatch(dir, 600_000).then(() => {
      done = true;
    });
    writeFileSync(join(dir, "heartbeat"), "x");
    expect(done).toBe(false);
    writeFileSync(join(dir, "exit"), "x");
    await w;
    expect(done).toBe(true);
  });

  test("an exit record already there resolves at once; a missing directory still resolves by its look", async () => {
    const dir = join(root, "b");
    mkdirSync(dir);
    writeFileSync(join(dir, "exit"), "x");
    await localExitWatch(dir, 600_000);
    const later = join(root, "c");
    const w = localExitWatch(later, 600_000);
    mkdirSync(later);
    writeFileSync(join(later, "exit"), "x");
    await w;
  });
});

describe("SlurmEvents on a host", () => {
  test("on by default for a local login node; slurm_watch = false turns it off and says so", () => {
    const on = hostWith({});
    expect(on.events.on).toBe(true);
    expect(on.events.offReason).toBeNull();
    const off = hostWith({ slurm_watch: false });
    expect(off.events.on).toBe(false);
    expect(off.events.offReason).toBe("slurm_watch = false in [hosts.cl]");
    on.close();
    off.close();
  });

  test("not shared: Slurm runs the job past the threshold and no started record is seen; a started record undoes it", () => {
    const h = hostWith({});
    const now = Date.now();
    h.events.judgeSharing("/d", "7", running(now - 5_000), false);
    expect(h.events.on).toBe(true);
    h.events.judgeSharing("/d", "7", running(now - NOT_SHARED_AFTER_MS - 5_000), false);
    expect(h.events.on).toBe(false);
    expect(h.events.offReason).toContain("slurm_job_dir seems not shared with the login node");
    h.events.judgeSharing("/d", "8", running(now - NOT_SHARED_AFTER_MS - 5_000), true);
    expect(h.events.on).toBe(true);
    h.close();
  });
});

describe("confirmGapMs", () => {
  test("0.5 s between the first confirmations (a result in about 2 s even when accounting lags), then doubling to the interval", () => {
    const gaps = [1, 2, 3, 4, 5, 6, 7, 8].map((asks) => confirmGapMs(asks, 60_000));
    expect(gaps).toEqual([500, 500, 500, 500, 1000, 2000, 4000, 8000]);
    expect(confirmGapMs(20, 60_000)).toBe(60_000);
    expect(confirmGapMs(1, 300)).toBe(300);
  });
});
