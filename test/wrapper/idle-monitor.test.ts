// wrapper.sh while the command is quiet: the monitor sleeps until something is due, yet a cancel, a timeout and the
// command's exit act at once during a long nap, a 20 MiB flood after a quiet spell is still capped with exact
// accounting, and a heartbeat that stops makes a reader that cannot check the wrapper's process call the job lost.

import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { observationFromRecords } from "../../src/backends/observation-from-records.ts";
import type { Job as StoredJob } from "../../src/core/model/job.ts";
import { lostAfterSeconds } from "../../src/core/model/liveness.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { logLayout, readHeartbeat, readLogTail, readStarted } from "../../src/wrapper/protocol.ts";
import { CANCEL_TEXT } from "../../src/wrapper/scripts.ts";
import { plainSpec } from "../helpers/spec.ts";
import { termCounter, termsIn } from "../helpers/term-counter.ts";
import { describeEachShell, type Job, newJob, type ShellCase, shellEnv, waitFor } from "./harness.ts";

// Naps far longer than any test's deadline: whatever happens in time was woken by a signal or a deadline.
const LONG = { tickSeconds: 30, heartbeatSeconds: 3600, checkMaxSeconds: 3600 };

/** The length of the monitor's current nap (its `sleep` child's argument), when it is in one. */
function napSeconds(job: Job): number | undefined {
  const monitor = readStarted(job.dir)?.monitorPid;
  if (!monitor) return undefined;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(") ") + 2).split(" ")[1]) !== monitor) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv[0]?.endsWith("sleep")) return Number(argv[1]);
    } catch {}
  }
  return undefined;
}

async function longNap(job: Job): Promise<void> {
  await waitFor("the monitor in a nap of 30 s or more", () =>
    (napSeconds(job) ?? 0) >= 30 ? true : undefined,
  );
}

function clientCancel(shell: ShellCase, job: Job, grace: number): void {
  const r = Bun.spawnSync(
    [...shell.argv, "-c", CANCEL_TEXT, "awaitless-cancel", job.dir, String(grace), "", job.jobId],
    { env: shellEnv(shell), stdout: "pipe", stderr: "pipe" },
  );
  expect(r.exitCode).toBe(0);
}

describeEachShell("wrapper monitor while idle", (shell) => {
  test("a cancel during a long nap reaches the command: one TERM, cleanup, exit record", async () => {
    await using job = newJob().start(shell, {
      argv: termCounter('"$AWAITLESS_JOB_DIR"'),
      graceSeconds: 30,
      ...LONG,
    });
    await longNap(job);
    clientCancel(shell, job, 30);
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "cancelled", exitCode: 0 });
    expect(termsIn(job.dir)).toBe(1);
  });

  test("a timeout fires from its deadline, not from the next check", async () => {
    await using job = newJob().start(shell, {
      argv: termCounter('"$AWAITLESS_JOB_DIR"'),
      timeoutSeconds: 3,
      graceSeconds: 30,
      ...LONG,
    });
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "timed_out", exitCode: 0 });
    expect(termsIn(job.dir)).toBe(1);
    expect(
      Number(job.read("timed_out").trim()) - readStarted(job.dir)!.startedAtEpochSeconds,
    ).toBeGreaterThanOrEqual(3);
  });

  test("the command's exit during a long nap is recorded", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "echo hi; while [ ! -e go ]; do sleep 0.1; done; echo bye"],
      ...LONG,
    });
    await longNap(job);
    writeFileSync(join(job.work, "go"), "");
    expect(await job.exit()).toMatchObject({ reason: "exited", exitCode: 0, stdoutBytes: 7 });
  });

  test("a 20 MiB flood after a quiet spell ends within the cap, with exact accounting", async () => {
    const cap = 1024 * 1024;
    const data = new Uint8Array(20 * 1024 * 1024 + 4321).map((_, i) => 32 + ((i * 7 + (i >> 12)) % 90));
    await using job = newJob();
    writeFileSync(join(job.work, "data"), data);
    job.start(shell, {
      argv: ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done; cat data"],
      logCapBytes: cap,
      checkMaxSeconds: 4,
      heartbeatSeconds: 3600,
    });
    await waitFor("a nap of the longest check gap", () => ((napSeconds(job) ?? 0) >= 3 ? true : undefined));
    writeFileSync(join(job.work, "go"), "");
    const exit = await job.exit(60_000);
    expect(exit).toMatchObject({ exitCode: 0, stdoutBytes: data.length });
    const layout = logLayout(job.dir, "stdout");
    expect(layout.droppedBytes).toBe(exit.stdoutDroppedBytes);
    expect(layout.droppedBytes + layout.prevBytes + layout.liveBytes).toBe(data.length);
    expect(layout.prevBytes + layout.liveBytes).toBeLessThanOrEqual(cap - cap / 8);
    expect(job.bytes("stdout.head")).toEqual(data.subarray(0, cap / 8));
    const kept = layout.prevBytes + layout.liveBytes;
    expect(readLogTail(job.dir, "stdout", kept)).toEqual(data.subarray(data.length - kept));
  });

  test("a heartbeat that stops: a reader that cannot check the wrapper calls the job lost after lost-after", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done"],
      heartbeatSeconds: 2,
    });
    const hb = await waitFor("a heartbeat", () => readHeartbeat(job.dir) ?? undefined);
    expect(hb.intervalSeconds).toBe(2);
    const started = readStarted(job.dir)!;
    process.kill(started.monitorPid!, "SIGSTOP");
    try {
      const last = readHeartbeat(job.dir)!;
      const obs = observationFromRecords(
        { started, exit: null, heartbeat: last, queued: null },
        { wrapperAlive: null, bootIdNow: null },
      );
      const stored = {
        job_id: "job_01HZTESTTESTTESTTESTTESTTE",
        state: "running",
        spec: plainSpec(),
        created_at: new Date(started.startedAtEpochSeconds * 1000).toISOString(),
        backend_id: { wrapper_pid: started.wrapperPid },
      } as unknown as StoredJob;
      const at = last.nowEpochSeconds * 1000;
      const ctx = (ms: number) => ({ nowMs: ms, launchGraceSeconds: 30 });
      expect(decide(stored, obs, ctx(at + 1000))).toMatchObject({ kind: "active", to: "running" });
      expect(decide(stored, obs, ctx(at + (lostAfterSeconds(2) + 1) * 1000))).toMatchObject({
        kind: "terminal",
        to: "lost",
        reason: "heartbeat_lost",
      });
    } finally {
      process.kill(started.monitorPid!, "SIGCONT");
    }
    writeFileSync(join(job.work, "go"), "");
    expect(await job.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
    expect(existsSync(job.path("checked"))).toBe(true);
  });
});
