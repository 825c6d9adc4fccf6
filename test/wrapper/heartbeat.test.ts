// wrapper.sh heartbeats: byte counts and progress size grow with the command, last_change moves only on change.

import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type HeartbeatRecord, readHeartbeat } from "../../src/wrapper/protocol.ts";
import { describeEachShell, helperScript, newJob, waitFor } from "./harness.ts";

const STEPS = [
  "echo first",
  "while [ ! -e go ]; do sleep 0.05; done",
  "echo second",
  'printf "50%%" > "$AWAITLESS_PROGRESS_FILE"',
  "echo oops >&2",
  "while [ ! -e stop ]; do sleep 0.05; done",
].join("\n");

describeEachShell("wrapper heartbeat", (shell) => {
  test("last_change advances with output and progress, and stays put while the command is quiet", async () => {
    const script = helperScript("heartbeat-steps.sh", STEPS);
    await using job = newJob().start(shell, { argv: [script], heartbeatSeconds: 1 });
    const heartbeat = (when: (hb: HeartbeatRecord) => boolean) => () => {
      const hb = readHeartbeat(job.dir);
      return hb !== null && when(hb) ? hb : undefined;
    };

    const first = await waitFor(
      "a heartbeat counting 'first'",
      heartbeat((hb) => hb.stdoutBytes === 6),
    );
    expect(first).toMatchObject({ stderrBytes: 0, progressBytes: 0 });
    const quiet = await waitFor(
      "a heartbeat a second later",
      heartbeat((hb) => hb.nowEpochSeconds > first.lastChangeEpochSeconds),
    );
    expect(quiet.lastChangeEpochSeconds).toBe(first.lastChangeEpochSeconds);

    writeFileSync(join(job.work, "go"), "");
    const later = await waitFor(
      "a heartbeat counting the second burst",
      heartbeat((hb) => hb.stdoutBytes === 13 && hb.stderrBytes === 5 && hb.progressBytes === 3),
    );
    expect(later.lastChangeEpochSeconds).toBeGreaterThan(first.lastChangeEpochSeconds);

    writeFileSync(join(job.work, "stop"), "");
    expect(await job.exit()).toMatchObject({ exitCode: 0, stdoutBytes: 13, stderrBytes: 5 });
  });
});
