// A Slurm requeue runs the wrapper again in the same job directory: the earlier run's records are moved aside as
// NAME.earlier before this run writes its own, so no reader takes the first run's exit or heartbeat for this run's.
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStarted } from "../../src/wrapper/protocol.ts";
import { describeEachShell, newJob, waitFor } from "./harness.ts";

const EARLIER = {
  started: "protocol=1\nwrapper_pid=999999\nmonitor_pid=999998\npid=999997\npgid=999997\nstarted_at=1\n",
  heartbeat: "now=2\nout=0\nerr=0\nprogress=0\nlast_change=2\ninterval=30\n",
  exit: "exit_code=0\nsignal=\nreason=exited\nfinished_at=3\ndescendants_alive=0\n",
};

describeEachShell("a requeued Slurm run", (shell) => {
  test("moves the earlier run's started, heartbeat and exit aside, then writes its own", async () => {
    await using job = newJob();
    for (const [name, text] of Object.entries(EARLIER)) writeFileSync(job.path(name), text);
    job.start(shell, {
      argv: ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; echo second; exit 3"],
      scheduler: "slurm",
    });
    const started = await waitFor("this run's started record", () => {
      const s = readStarted(job.dir);
      return s && s.pid !== 999997 ? s : undefined;
    });
    expect(started.wrapperPid).not.toBe(999999);
    // while this run's command runs, no exit record: the earlier run's exit 0 is only under exit.earlier
    expect(existsSync(job.path("exit"))).toBe(false);
    for (const [name, text] of Object.entries(EARLIER)) expect(job.read(`${name}.earlier`)).toBe(text);
    await waitFor("this run's heartbeat", () =>
      existsSync(job.path("heartbeat")) && !job.read("heartbeat").startsWith("now=2\n") ? true : undefined,
    );
    writeFileSync(join(job.work, "go"), "");
    expect(await job.exit()).toMatchObject({ reason: "exited", exitCode: 3 });
  });
});
