// wrapper.sh queue recovery under each shell: a cancelled waiter never starts and frees its place, a dead
// owner's mkdir lock and a slot from before a reboot are reclaimed, a killed waiter leaves the line.

import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readExitRecord, readQueued, readStarted, writeCancelRequest } from "../../src/wrapper/protocol.ts";
import { describeEachShell, type Job, waitFor } from "./harness.ts";
import { QueueDir } from "./queue-harness.ts";

const UNTIL_GO = ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done"];

async function startedOf(job: Job): Promise<void> {
  await waitFor(`${job.dir} to start`, () => (readStarted(job.dir) ? true : undefined));
}

describeEachShell("wrapper queue recovery", (shell) => {
  test("a cancelled waiter never starts, and the job behind it is admitted", async () => {
    await using q = new QueueDir();
    const first = await q.start(shell, q.admission("c", 1), { argv: UNTIL_GO });
    await startedOf(first);
    const second = await q.start(shell, q.admission("c", 1), { argv: ["sh", "-c", "touch ran"] });
    const third = await q.start(shell, q.admission("c", 1), { argv: ["true"] });
    writeCancelRequest(second.dir, 5);
    expect(await second.exit()).toMatchObject({ reason: "cancelled" });
    expect(readExitRecord(second.dir)?.exitCode).toBeUndefined();
    expect(readStarted(second.dir)).toBeNull();
    await waitFor("the third job to move up", () => (readQueued(third.dir)?.ahead === 0 ? true : undefined));
    writeFileSync(join(first.work, "go"), "");
    expect(await third.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
    expect(existsSync(join(second.work, "ran"))).toBe(false);
  }, 30_000);

  test("a dead owner's mkdir lock and a slot from before a reboot are reclaimed", async () => {
    await using q = new QueueDir("mkdir");
    for (const d of ["running", "waiting", "tmp", "lock.d"]) mkdirSync(join(q.root, d), { recursive: true });
    writeFileSync(join(q.root, "lock.mode"), "mkdir\n");
    // lock held by a pid that cannot exist; a slot owned by a live pid (this test) but from another boot
    writeFileSync(join(q.root, "lock.d", "4194999.1.not-this-boot"), "");
    writeFileSync(
      join(q.root, "running", "job_OLDBOOT"),
      `ticket=1\nqueue=r\nconcurrency=1\nresources=\nwrapper_pid=${process.pid}\nproc_start=\nboot_id=not-this-boot\n`,
    );
    const job = await q.start(shell, q.admission("r", 1), { argv: ["true"] });
    expect(await job.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
    expect(readdirSync(join(q.root, "running")).filter((n) => n === "job_OLDBOOT")).toEqual([]);
    expect(job.read("wrapper.log")).toContain("removed the admission lock");
  }, 30_000);

  test("a waiter killed with SIGKILL leaves the line", async () => {
    await using q = new QueueDir();
    const first = await q.start(shell, q.admission("k", 1), { argv: UNTIL_GO });
    await startedOf(first);
    const doomed = await q.start(shell, q.admission("k", 1), { argv: ["true"] });
    const last = await q.start(shell, q.admission("k", 1), { argv: ["true"] });
    await waitFor("the last job to see one ahead", () =>
      readQueued(last.dir)?.ahead === 1 ? true : undefined,
    );
    await doomed[Symbol.asyncDispose]();
    await waitFor("the last job to move up", () => (readQueued(last.dir)?.ahead === 0 ? true : undefined));
    writeFileSync(join(first.work, "go"), "");
    expect(await last.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
  }, 30_000);
});
