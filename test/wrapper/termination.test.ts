// wrapper.sh stops whole process groups on timeout and cancel (TERM, then KILL after the grace period), and
// reports descendants that outlive a command that exits on its own.

import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStarted, writeCancelRequest } from "../../src/wrapper/protocol.ts";
import { describeEachShell, isGone, type Job, newJob, waitFor } from "./harness.ts";

// The command starts a background grandchild, records its pid, then waits forever.
const FAMILY = "sleep 300 & echo $! > grandchild.pid; echo ready; while :; do sleep 1; done";

function grandchildPid(job: Job): number {
  const pid = Number(readFileSync(join(job.work, "grandchild.pid"), "utf8").trim());
  job.extraPids.push(pid);
  return pid;
}

async function waitUntilReady(job: Job): Promise<void> {
  await waitFor("the command to print ready", () =>
    existsSync(join(job.work, "grandchild.pid")) && job.read("stdout").includes("ready") ? true : undefined,
  );
}

describeEachShell("wrapper stops jobs", (shell) => {
  test("a timeout kills the whole group, grandchild included", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", FAMILY],
      timeoutSeconds: 1,
      graceSeconds: 5,
    });
    await waitUntilReady(job);
    const grandchild = grandchildPid(job);
    const exit = await job.exit();
    const started = readStarted(job.dir)!;
    expect(exit).toMatchObject({
      reason: "timed_out",
      exitCode: 143,
      signal: "TERM",
      descendantsAlive: false,
    });
    expect(existsSync(job.path("timed_out"))).toBe(true);
    expect(isGone(started.pid)).toBe(true);
    await waitFor("the grandchild to be gone", () => (isGone(grandchild) ? true : undefined), 5_000);
  });

  test("a monitor.stop left in the directory by an earlier attempt does not switch the timeout off", async () => {
    await using job = newJob();
    writeFileSync(job.path("monitor.stop"), "");
    job.start(shell, { argv: ["sh", "-c", "exec sleep 30"], timeoutSeconds: 1, graceSeconds: 1 });
    expect(await job.exit()).toMatchObject({ reason: "timed_out", signal: "TERM" });
    await waitFor(
      "monitor.stop removed",
      () => (existsSync(job.path("monitor.stop")) ? undefined : true),
      5_000,
    );
  });

  test("a cancel file stops the group", async () => {
    await using job = newJob().start(shell, { argv: ["sh", "-c", FAMILY], graceSeconds: 30 });
    await waitUntilReady(job);
    const grandchild = grandchildPid(job);
    writeCancelRequest(job.dir, 5);
    const exit = await job.exit();
    expect(exit).toMatchObject({
      reason: "cancelled",
      exitCode: 143,
      signal: "TERM",
      descendantsAlive: false,
    });
    expect(isGone(readStarted(job.dir)!.pid)).toBe(true);
    await waitFor("the grandchild to be gone", () => (isGone(grandchild) ? true : undefined), 5_000);
  });

  test("a command that ignores TERM is killed after the grace period", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", `trap '' TERM; ${FAMILY}`],
      graceSeconds: 1,
    });
    await waitUntilReady(job);
    const grandchild = grandchildPid(job);
    writeCancelRequest(job.dir, 1);
    const exit = await job.exit();
    expect(exit).toMatchObject({
      reason: "cancelled",
      exitCode: 137,
      signal: "KILL",
      descendantsAlive: false,
    });
    expect(job.read("wrapper.log")).toContain("KILL");
    await waitFor("the grandchild to be gone", () => (isGone(grandchild) ? true : undefined), 5_000);
  });

  test("a background child that outlives the command is reported, listed and stopped", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > grandchild.pid"],
    });
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "exited", exitCode: 0, descendantsAlive: true });
    expect(exit).toMatchObject({ leftovers: 1, leftoversAction: "stopped" });
    const grandchild = grandchildPid(job);
    // its command line as the wrapper saw it: `sleep 300`, or the shell it forked from before that exec'd
    expect(job.read("leftovers")).toStartWith(`${grandchild} `);
    expect(isGone(grandchild)).toBe(true);
  });

  test("with AWL_KEEP_LEFTOVERS=1 a background child that outlives the command is listed and left running", async () => {
    await using job = newJob().start(shell, {
      argv: ["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $! > grandchild.pid"],
      keepLeftovers: true,
    });
    const exit = await job.exit();
    expect(exit).toMatchObject({ reason: "exited", exitCode: 0, leftovers: 1, leftoversAction: "kept" });
    const grandchild = grandchildPid(job);
    expect(isGone(grandchild)).toBe(false);
    // its command line as the wrapper saw it: `sleep 300`, or the shell it forked from before that exec'd
    expect(job.read("leftovers")).toStartWith(`${grandchild} `);
  });
});
