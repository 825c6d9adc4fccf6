// wrapper.sh queue admission under each shell: concurrency is never exceeded, admission is FIFO, the runtime
// timeout starts at admission, and resource locks are all-or-none without overtaking.

import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readExitRecord, readQueued, readStarted } from "../../src/wrapper/protocol.ts";
import { describeEachShell, type Job, waitFor } from "./harness.ts";
import { QueueDir, sample } from "./queue-harness.ts";

/** A command that runs until the test creates `go` in its work directory. */
const UNTIL_GO = ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done"];

function release(job: Job): void {
  Bun.write(join(job.work, "go"), "");
}

async function startedOf(job: Job): Promise<void> {
  await waitFor(`${job.dir} to start`, () => (readStarted(job.dir) ? true : undefined));
}

describeEachShell("wrapper queue admission", (shell) => {
  for (const lock of ["auto", "mkdir"] as const) {
    test(
      `10 jobs into concurrency 2 never exceed 2 and start in FIFO order (lock ${lock})`,
      async () => {
        await using q = new QueueDir(lock);
        // Each command waits for the gate, then runs 0.5 s: the first two hold their slots until every job is
        // in line, so the line is full when sampling begins (starting a job under load takes about as long as
        // one runs, so without the gate the line may never form and two never run at once).
        const gate = join(q.root, "go");
        const argv = ["sh", "-c", 'while [ ! -e "$1" ]; do sleep 0.05; done; sleep 0.5', "sh", gate];
        const jobs: Job[] = [];
        for (let i = 0; i < 10; i++) jobs.push(await q.start(shell, q.admission("pool", 2), { argv }));
        const tickets = jobs.map((job) => readQueued(job.dir)!.ticket);
        expect(tickets).toEqual([...tickets].sort((a, b) => a - b));
        await startedOf(jobs[0]!);
        await startedOf(jobs[1]!);
        // sample() takes its first sample before it yields, so that sample sees the two gated jobs running.
        const sampling = sample(q, jobs, () => jobs.every((job) => readExitRecord(job.dir) !== null));
        await Bun.write(gate, "");
        const report = await sampling;
        expect(report.samples).toBeGreaterThan(10);
        expect(report.maxRunningEntries).toBeLessThanOrEqual(2);
        expect(report.maxRunningCommands).toBeLessThanOrEqual(2);
        expect(report.maxRunningEntries).toBe(2);
        expect(report.fifoViolations).toEqual([]);
        for (const job of jobs)
          expect(readExitRecord(job.dir)).toMatchObject({ reason: "exited", exitCode: 0 });
        // admission order = ticket order, seen in when each command started
        const startedAt = jobs.map((job) => Bun.file(job.path("started")).lastModified);
        for (let i = 2; i < 10; i++) expect(startedAt[i]!).toBeGreaterThanOrEqual(startedAt[i - 2]!);
        // slots are freed just after each exit record
        await waitFor("every slot to be freed", () => (q.entries("running").length === 0 ? true : undefined));
        expect(q.entries("waiting")).toEqual([]);
      },
      { timeout: 60_000 },
    );
  }

  test("a queued job reports its place in line, and the runtime timeout starts at admission", async () => {
    await using q = new QueueDir();
    const first = await q.start(shell, q.admission("one", 1), { argv: UNTIL_GO });
    await startedOf(first);
    const second = await q.start(shell, q.admission("one", 1), {
      argv: ["sh", "-c", "sleep 1; echo done"],
      timeoutSeconds: 3,
    });
    const third = await q.start(shell, q.admission("one", 1), { argv: ["true"] });
    await waitFor("the third job to see one job ahead", () =>
      readQueued(third.dir)?.ahead === 1 ? true : undefined,
    );
    expect(readQueued(second.dir)).toMatchObject({ queue: "one", position: 1, ahead: 0, running: 1 });
    expect(readQueued(third.dir)).toMatchObject({ position: 2, ahead: 1, running: 1 });
    // Waiting longer than the second job's timeout must not count against it.
    await Bun.sleep(3500);
    expect(readStarted(second.dir)).toBeNull();
    release(first);
    expect(await second.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
    expect(second.read("stdout")).toBe("done\n");
    expect(readQueued(second.dir)?.admittedAtEpochSeconds).toBeGreaterThan(0);
    expect(await third.exit()).toMatchObject({ reason: "exited", exitCode: 0 });
  }, 30_000);

  test("resource locks: all or none, no overtaking, and the command sees what it holds", async () => {
    await using q = new QueueDir();
    const env = [
      "sh",
      "-c",
      'printf "%s|%s" "$AWAITLESS_RESOURCES" "$AWAITLESS_QUEUE"; while [ ! -e go ]; do sleep 0.05; done',
    ];
    const a = await q.start(shell, q.admission(null, 1, ["gpu=0"]), { argv: env });
    await startedOf(a);
    const b = await q.start(shell, q.admission(null, 1, ["gpu=1", "gpu=0"]), { argv: env });
    const c = await q.start(shell, q.admission(null, 1, ["gpu=1"]), { argv: env });
    const d = await q.start(shell, q.admission(null, 1, ["disk=scratch"]), { argv: env });
    // d shares nothing: it starts while a runs; b waits for gpu=0 and holds nothing meanwhile; c waits behind b.
    await startedOf(d);
    await waitFor("b and c to report their wait", () =>
      readQueued(b.dir)?.held && readQueued(c.dir)?.ahead === 1 ? true : undefined,
    );
    expect(readStarted(b.dir)).toBeNull();
    expect(readStarted(c.dir)).toBeNull();
    release(a);
    await startedOf(b);
    expect(readStarted(c.dir)).toBeNull();
    await waitFor("b's output", () => (b.read("stdout") ? true : undefined));
    expect(b.read("stdout")).toBe("gpu=0,gpu=1|");
    release(b);
    await startedOf(c);
    release(c);
    release(d);
    for (const job of [a, b, c, d]) expect(await job.exit()).toMatchObject({ exitCode: 0 });
    expect(a.read("stdout")).toBe("gpu=0|");
  }, 30_000);

  test("a queue name reaches the command as AWAITLESS_QUEUE", async () => {
    await using q = new QueueDir();
    const job = await q.start(shell, q.admission("named.q-1", 3, ["x=1"]), {
      argv: ["sh", "-c", 'printf "%s|%s" "$AWAITLESS_QUEUE" "$AWAITLESS_RESOURCES"'],
    });
    expect(await job.exit()).toMatchObject({ exitCode: 0 });
    expect(job.read("stdout")).toBe("named.q-1|x=1");
    expect(existsSync(join(q.root, "lock.mode"))).toBe(true);
    expect(readFileSync(join(q.root, "ticket"), "utf8").trim()).toBe("1");
  });
});
