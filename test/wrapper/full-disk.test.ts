// wrapper.sh on a full disk (a real 1 MiB tmpfs as the job directory, root only): the exit record reserved at
// start-up is written whatever the command's output took, and a start that cannot be recorded never runs.
import { expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXIT_RESERVATION, renderSpec } from "../../src/wrapper/protocol.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";
import { fillUp, freeBytes, mountTmpfs, tmpfsAvailable, unmountTmpfs } from "../helpers/tmpfs.ts";
import { describeEachShell, type Job, newJob } from "./harness.ts";

async function onFullDisk(body: (job: Job) => Promise<void>): Promise<void> {
  await using job = newJob();
  mountTmpfs(job.dir, "1m", ["mode=0700"]);
  try {
    await body(job);
  } finally {
    unmountTmpfs(job.dir);
  }
}

if (gateOnAvailability("wrapper full-disk tests (a real tmpfs)", tmpfsAvailable())) {
  describeEachShell("wrapper on a full disk", (shell) => {
    test("output that fills the disk leaves the exit record and its exit code", () =>
      onFullDisk(async (job) => {
        job.start(shell, { argv: ["sh", "-c", 'head -c 4000000 /dev/zero | tr "\\0" x; exit 7'] });
        const exit = await job.exit();
        expect(freeBytes(job.dir)).toBeLessThan(8192);
        expect(exit).toMatchObject({ exitCode: 7, reason: "exited", noSpace: true });
        expect(exit.stdoutBytes).toBe(statSync(job.path("stdout")).size);
        expect(statSync(job.path("exit")).size).toBe(EXIT_RESERVATION.text.length);
        expect(existsSync(job.path(EXIT_RESERVATION.name))).toBe(false);
      }));

    test("no room to record the start: the command never runs and the record says launch_failed", () =>
      onFullDisk(async (job) => {
        const ran = join(job.work, "ran");
        // As a launcher does: spec.sh and the reservation first; then something else takes the rest of the disk.
        const spec = renderSpec({
          jobId: job.jobId,
          cwd: job.work,
          env: {},
          argv: ["touch", ran],
        });
        writeFileSync(job.path("spec.sh"), spec, { mode: 0o600 });
        writeFileSync(job.path(EXIT_RESERVATION.name), EXIT_RESERVATION.text);
        writeFileSync(job.path("wrapper.log"), "");
        fillUp(job.dir);
        expect(freeBytes(job.dir)).toBe(0);
        job.launch(shell);
        const exit = await job.exit();
        expect(exit).toMatchObject({ exitCode: 126, reason: "launch_failed" });
        expect(existsSync(ran)).toBe(false);
      }));
  });
}
