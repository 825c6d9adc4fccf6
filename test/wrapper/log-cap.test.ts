// wrapper.sh log cap: disk stays near the cap, the head and the true tail are kept, and
// dropped + kept == written exactly once the command has exited, also while the command writes during rotations.

import { expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type LogStream, logLayout, readLogTail } from "../../src/wrapper/protocol.ts";
import { describeEachShell, helperScript, type Job, newJob } from "./harness.ts";

const CAP = 64 * 1024;
const HEAD = CAP / 8;

// Numbered lines, so any misplaced byte range shows up as a mismatch.
function makeData(bytes: number): Uint8Array {
  let text = "";
  for (let line = 0; text.length < bytes; line++) text += `line ${line} ${"x".repeat(line % 50)}\n`;
  return new TextEncoder().encode(text.slice(0, bytes));
}

function diskBytes(job: Job, stream: LogStream): number {
  let total = 0;
  for (const name of [stream, `${stream}.prev`, `${stream}.head`, `${stream}.dropped`]) {
    if (existsSync(job.path(name))) total += statSync(job.path(name)).size;
  }
  return total;
}

function expectReconstructs(job: Job, stream: LogStream, data: Uint8Array, droppedInExit: number): void {
  const layout = logLayout(job.dir, stream);
  expect(layout.droppedBytes).toBe(droppedInExit);
  expect(layout.droppedBytes + layout.prevBytes + layout.liveBytes).toBe(data.length);
  expect(layout.totalBytes).toBe(data.length);
  expect(layout.headBytes).toBe(HEAD);
  expect(layout.omittedBytes).toBe(layout.droppedBytes - HEAD);
  expect(job.bytes(`${stream}.head`)).toEqual(data.subarray(0, HEAD));
  const kept = layout.prevBytes + layout.liveBytes;
  expect(readLogTail(job.dir, stream, kept)).toEqual(data.subarray(data.length - kept));
  expect(diskBytes(job, stream)).toBeLessThanOrEqual(CAP + 32);
}

describeEachShell("wrapper log cap", (shell) => {
  test("a burst of 20x the cap ends within the cap with exact accounting", async () => {
    const data = makeData(20 * CAP + 12_345);
    await using job = newJob();
    writeFileSync(join(job.work, "data"), data);
    job.start(shell, { argv: ["sh", "-c", "cat data; cat data >&2"], logCapBytes: CAP });
    const exit = await job.exit();
    expect(exit).toMatchObject({ exitCode: 0, stdoutBytes: data.length, stderrBytes: data.length });
    expect(exit.stdoutDroppedBytes).toBeGreaterThan(data.length - CAP);
    expectReconstructs(job, "stdout", data, exit.stdoutDroppedBytes);
    expectReconstructs(job, "stderr", data, exit.stderrDroppedBytes);
  });

  test("a command writing without pause while rotations run: no byte lost or repeated, accounting exact", async () => {
    // about 7 MB of one-line writes, several ticks long: every rotation lands in the middle of the writes
    const lines = 600_000;
    const data = new TextEncoder().encode(Array.from({ length: lines }, (_, i) => `line ${i}\n`).join(""));
    await using job = newJob();
    const script = `i=0; while [ $i -lt ${lines} ]; do echo "line $i"; i=$((i+1)); done`;
    job.start(shell, { argv: ["sh", "-c", script], logCapBytes: CAP });
    const exit = await job.exit(120_000);
    expect(exit).toMatchObject({ exitCode: 0, stdoutBytes: data.length });
    expectReconstructs(job, "stdout", data, exit.stdoutDroppedBytes);
  }, 120_000);

  test("rotation while the command runs keeps disk near the cap and the accounting exact", async () => {
    const CHUNK = 100 * 1024;
    const CHUNKS = 6;
    const data = makeData(CHUNK * CHUNKS);
    // Writes a chunk, then waits for the monitor to rotate it away before writing the next: no byte is
    // written during a rotation, so the count must be exact (the documented race cannot occur).
    const writer = helperScript(
      "chunk-writer.sh",
      [
        "i=0",
        `while [ $i -lt ${CHUNKS} ]; do`,
        `  dd if=data bs=${CHUNK} skip=$i count=1 2>/dev/null`,
        "  i=$((i + 1))",
        `  [ $i -lt ${CHUNKS} ] || break`,
        `  while [ "$(wc -c < "$AWAITLESS_JOB_DIR/stdout")" -ge ${CHUNK} ]; do sleep 0.05; done`,
        "done",
      ].join("\n"),
    );
    await using job = newJob();
    writeFileSync(join(job.work, "data"), data);
    job.start(shell, { argv: [writer], logCapBytes: CAP });
    let maxDisk = 0;
    const sampling = setInterval(() => {
      maxDisk = Math.max(maxDisk, diskBytes(job, "stdout"));
    }, 20);
    try {
      // (under the test's own limit: a stuck job is then shown, files, heartbeat and processes, not just timed out)
      const exit = await job.exit(50_000);
      expect(exit).toMatchObject({ exitCode: 0, stdoutBytes: data.length });
      expectReconstructs(job, "stdout", data, exit.stdoutDroppedBytes);
    } finally {
      clearInterval(sampling);
    }
    // Between rotations the live file may hold one tick of output (one chunk here) on top of the cap.
    expect(maxDisk).toBeLessThanOrEqual(CAP + CHUNK + 32);
    expect(maxDisk).toBeGreaterThan(0);
  }, 60_000);
});
