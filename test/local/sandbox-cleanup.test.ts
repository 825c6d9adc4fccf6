// The test sandbox's cleanup stops what its jobs still run: a test that fails or runs out of time never reaches its
// own `finally`, and a job waiting on a file in the removed directory would otherwise run for ever.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gatedCommand, isOwnRun, killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";
import { statField } from "../helpers/proc-state.ts";

test("cleanup kills an unfinished job's wrapper, its command and the command's child", async () => {
  const sb = new Sandbox();
  let pids: number[] = [];
  try {
    // a command that waits on a gate nobody opens, with a child of its own
    const id = sb.submit(gatedCommand(join(sb.work, "never"), "sleep 300 & :"));
    const dir = join(sb.dataDir, "jobs", id);
    const started = await until(
      "the started record",
      () => {
        try {
          return readFileSync(join(dir, "started"), "utf8");
        } catch {
          return undefined;
        }
      },
      30_000,
    );
    const field = (name: string) => Number(new RegExp(`^${name}=(\\d+)$`, "m").exec(started)![1]);
    // the command's child: known by the job directory in its environment
    const child = await until(
      "the command's sleep",
      () =>
        readdirSync("/proc").find((n) => {
          try {
            return (
              readFileSync(`/proc/${n}/cmdline`, "utf8") === "sleep\u0000300\u0000" &&
              readFileSync(`/proc/${n}/environ`, "utf8").split("\u0000").includes(`AWAITLESS_JOB_DIR=${dir}`)
            );
          } catch {
            return false;
          }
        }),
      30_000,
    );
    pids = [field("wrapper_pid"), field("pid"), Number(child)];
    for (const pid of pids) expect(pidAlive(pid)).toBe(true);
  } finally {
    sb.cleanup();
  }
  try {
    await until("every process of the job gone", () => pids.every((p) => !pidAlive(p)) || undefined, 10_000);
  } finally {
    for (const pid of pids) killQuietly(pid);
  }
});

test("killQuietly never signals this test run: itself, its runner, the runner's other workers, or their group", async () => {
  const pgid = Number(statField("self", 5));
  expect(isOwnRun(process.pid)).toBe(true);
  expect(isOwnRun(process.ppid)).toBe(true);
  expect(isOwnRun(-pgid)).toBe(true);
  // what a test starts itself is signalled
  const child = Bun.spawn(["sleep", "300"]);
  try {
    expect(isOwnRun(child.pid)).toBe(false);
    killQuietly(child.pid);
    expect(await child.exited).not.toBe(0);
  } finally {
    child.kill("SIGKILL");
  }
  // a sibling: a process the runner (this process's parent) started, as it starts its workers
  if (process.ppid > 1) {
    for (const name of readdirSync("/proc")) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      if (Number(statField(pid, 4)) === process.ppid) expect(isOwnRun(pid)).toBe(true);
    }
  }
});
