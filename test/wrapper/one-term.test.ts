// Cancel and timeout send the command's group exactly one TERM, then KILL after the grace period: the client's
// cancel.sh (run by the same shell) only wakes the wrapper, a second cancel sends nothing, a wrapper that is gone has
// its group stopped by cancel.sh with one TERM, and under Slurm (AWL_SCHEDULER=slurm) the wrapper outlives scancel's TERM.

import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readHeartbeat, readStarted, writeCancelRequest } from "../../src/wrapper/protocol.ts";
import { CANCEL_TEXT } from "../../src/wrapper/scripts.ts";
import { termCounter, termsIn } from "../helpers/term-counter.ts";
import { describeEachShell, isGone, type Job, newJob, type ShellCase, shellEnv, waitFor } from "./harness.ts";

const counter = (ignoreTerm = false) => termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm });
const terms = (job: Job) => termsIn(job.dir);

async function ready(job: Job): Promise<void> {
  await waitFor("the command to print ready", () =>
    existsSync(job.path("stdout")) && job.read("stdout").includes("ready") ? true : undefined,
  );
}

/** Runs cancel.sh as the client does (locally with the configured shell; over SSH with the host's sh). */
function clientCancel(shell: ShellCase, job: Job, grace: number): void {
  const r = Bun.spawnSync(
    [...shell.argv, "-c", CANCEL_TEXT, "awaitless-cancel", job.dir, String(grace), "", job.jobId],
    {
      env: shellEnv(shell),
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
}

describeEachShell("one TERM per stop", (shell) => {
  test("a client's cancel: one TERM, the cleanup runs to its end; a second cancel meanwhile sends none", async () => {
    await using job = newJob().start(shell, { argv: counter(), graceSeconds: 30, tickSeconds: 1 });
    await ready(job);
    expect(readStarted(job.dir)?.monitorPid).toBeGreaterThan(1);
    clientCancel(shell, job, 30);
    await waitFor("the first TERM", () => (terms(job) === 1 ? true : undefined));
    clientCancel(shell, job, 30);
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "cancelled", exitCode: 0 });
    expect(terms(job)).toBe(1);
    expect(job.read("term-done")).toBe("cleaned up after 1 TERM\n");
    expect(job.read("wrapper.log").match(/sending TERM/g)).toHaveLength(1);
  });

  test("a command that ignores TERM gets one TERM, then KILL after the grace", async () => {
    await using job = newJob().start(shell, { argv: counter(true), graceSeconds: 30 });
    await ready(job);
    clientCancel(shell, job, 1);
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "cancelled", exitCode: 137, signal: "KILL" });
    expect(terms(job)).toBe(1);
    expect(job.read("wrapper.log")).toContain("grace period over: sending KILL");
  });

  test("the runtime timeout: one TERM, and no second one from a cancel during the cleanup", async () => {
    await using job = newJob().start(shell, { argv: counter(), timeoutSeconds: 1, graceSeconds: 30 });
    await ready(job);
    await waitFor("the timeout's TERM", () => (terms(job) === 1 ? true : undefined));
    clientCancel(shell, job, 30);
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "timed_out", exitCode: 0 });
    expect(terms(job)).toBe(1);
    expect(existsSync(job.path("term-done"))).toBe(true);
  });

  test("the wrapper gone: cancel.sh stops the group with one TERM, a second cancel sends none, KILL after the grace", async () => {
    await using job = newJob().start(shell, { argv: counter(true), graceSeconds: 30 });
    await ready(job);
    const started = readStarted(job.dir)!;
    process.kill(started.wrapperPid, "SIGKILL");
    if (started.monitorPid) process.kill(started.monitorPid, "SIGKILL");
    await waitFor("the wrapper to be gone", () => (isGone(started.wrapperPid) ? true : undefined));
    clientCancel(shell, job, 2);
    await waitFor("the TERM", () => (terms(job) === 1 ? true : undefined));
    clientCancel(shell, job, 2);
    await waitFor("the group to be killed", () => (isGone(started.pid) ? true : undefined), 15_000);
    expect(terms(job)).toBe(1);
    expect(existsSync(job.path("cancelled"))).toBe(true);
    const log = job.read("wrapper.log");
    expect(log.match(/the wrapper is gone; sending TERM/g)).toHaveLength(1);
    expect(log).toContain("grace period over: sending KILL");
  });

  test("cancel.sh wakes only a monitor that handles USR2 (one still starting up would die of it)", async () => {
    await using job = newJob();
    // A stand-in wrapper whose child does not trap USR2, recorded as its monitor.
    const fake = Bun.spawn(["sh", "-c", "sleep 30 & echo $!; wait"], { stdout: "pipe" });
    const reader = fake.stdout.getReader();
    const child = Number(new TextDecoder().decode((await reader.read()).value).trim());
    reader.releaseLock();
    job.extraPids.push(child, fake.pid);
    const stat = readFileSync(`/proc/${fake.pid}/stat`, "utf8");
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    writeFileSync(
      job.path("started"),
      `protocol=1\nwrapper_pid=${fake.pid}\nmonitor_pid=${child}\npid=${child}\npgid=\nproc_start=${start}\nstarted_at=1\n`,
    );
    clientCancel(shell, job, 5);
    expect(job.read("cancel")).toBe("5\n");
    expect(isGone(child)).toBe(false);
  });

  test("under Slurm the wrapper outlives scancel's TERM (only it gets one) and the monitor sends the command one", async () => {
    await using job = newJob().start(shell, { argv: counter(), graceSeconds: 30, scheduler: "slurm" });
    await ready(job);
    // What scancel does with proctrack/cgroup: CONT and TERM to the batch shell only (the wrapper), KILL later.
    const started = readStarted(job.dir)!;
    process.kill(started.wrapperPid, "SIGCONT");
    process.kill(started.wrapperPid, "SIGTERM");
    const at = Math.floor(Date.now() / 1000);
    await waitFor("two more heartbeats", () =>
      (readHeartbeat(job.dir)?.nowEpochSeconds ?? 0) >= at + 2 ? true : undefined,
    );
    expect(isGone(started.wrapperPid)).toBe(false);
    expect(terms(job)).toBe(0);
    // The cancel file the client wrote (before scancel, from the login node: no wake-up, the next tick acts).
    writeCancelRequest(job.dir, 30);
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "cancelled", exitCode: 0 });
    expect(terms(job)).toBe(1);
    expect(job.read("term-done")).toBe("cleaned up after 1 TERM\n");
  });

  test("under Slurm a cancel that lands before the command starts: it never runs, its exit code is empty", async () => {
    await using job = newJob();
    writeCancelRequest(job.dir, 1);
    job.start(shell, { argv: ["sh", "-c", "echo ran > ran"], scheduler: "slurm" });
    const exit = await job.exit();
    expect(exit.reason).toBe("cancelled");
    expect(exit.exitCode).toBeUndefined();
    expect(existsSync(join(job.work, "ran"))).toBe(false);
    expect(readFileSync(job.path("wrapper.log"), "utf8")).toContain("never ran");
  });
});
