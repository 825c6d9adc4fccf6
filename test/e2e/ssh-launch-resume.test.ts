// A retry with the same client_request_id after the creating client died, on an SSH host (private OpenSSH sshd): it
// finishes a launch that certainly never started, exactly once, and never starts a second wrapper where one may be.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("launch resume over SSH (private OpenSSH server)", sshdAvailable());

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

const tag = Math.random().toString(36).slice(2, 10);

describe.skipIf(!runE2e)("retry after the creating client died, over SSH", () => {
  const host = () => w.alias.dash;
  /** submit --json with key `key` of a command that appends a line to ./NAME in the remote login directory. */
  const keyed = (key: string, name: string) => [
    "submit",
    "--json",
    "--host",
    host(),
    "--client-request-id",
    `${key}-${tag}`,
    "--",
    "sh",
    "-c",
    `echo x >> ./${name}-${tag}`,
  ];
  /** How many times the command ran: the remote marker file, read by another job. */
  const executions = (name: string) => {
    const r = w.sb.run([
      "run",
      "--json",
      "--host",
      host(),
      "--",
      "sh",
      "-c",
      `cat ./${name}-${tag} 2>/dev/null`,
    ]);
    return r.json.stdout_tail as string;
  };

  test("killed after reservation: the retry launches it once; a further retry starts nothing", () => {
    expect(
      w.sb.run(keyed("resume", "resume"), { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } }).code,
    ).toBe(99);
    const retry = w.sb.run(keyed("resume", "resume"));
    expect(retry.code).toBe(0);
    expect(retry.json.launch_resumed).toBe(true);
    const id = retry.json.job_id;
    const done = w.sb.run(["wait", "--json", id]);
    expect(done.json.state).toBe("succeeded");
    expect(done.json.backend).toBe("ssh");
    const again = w.sb.run(keyed("resume", "resume"));
    expect(again.json.job_id).toBe(id);
    expect(again.json).not.toHaveProperty("launch_resumed");
    expect(executions("resume")).toBe("x\n");
  }, 60_000);

  test("killed after the remote wrapper started: the retry finds its directory and does not relaunch", () => {
    const crashed = w.sb.run(keyed("after", "after"), { env: { AWAITLESS_TEST_CRASH_AFTER_LAUNCH: "1" } });
    expect(crashed.code).toBe(98);
    const retry = w.sb.run(keyed("after", "after"));
    expect(retry.json).not.toHaveProperty("launch_resumed");
    expect(w.sb.run(["wait", "--json", retry.json.job_id]).json.state).toBe("succeeded");
    expect(executions("after")).toBe("x\n");
  }, 60_000);

  test("a job directory that appears on the host first (an abandoned launch still landing) stops the retry's launch", () => {
    expect(
      w.sb.run(keyed("landed", "landed"), { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } }).code,
    ).toBe(99);
    const id = w.sb.run(["list", "--json", "--state", "starting"]).json.jobs[0].job_id as string;
    // the host's jobs directory, from a job that ran there; the late launch's directory, owned by the remote user
    const ran = w.sb.submit(["true"], ["--host", host()]);
    const jobsDir = dirname(w.sb.status(ran).backend_id.remote_dir);
    const landed = join(jobsDir, id);
    mkdirSync(landed, { mode: 0o700 });
    const owner = statSync(jobsDir);
    chownSync(landed, owner.uid, owner.gid);
    const retry = w.sb.run(keyed("landed", "landed"));
    expect(retry.code).toBe(0);
    expect(retry.json.job_id).toBe(id);
    expect(retry.json).not.toHaveProperty("launch_resumed");
    expect(retry.json.state).toBe("starting");
    expect(w.sb.status(id).backend_id).toBeNull();
    expect(executions("landed")).toBe("");
  }, 60_000);

  test("5 concurrent retries after the crash launch it once", async () => {
    expect(w.sb.run(keyed("race", "race"), { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } }).code).toBe(
      99,
    );
    const runs = await Promise.all(Array.from({ length: 5 }, () => w.sb.runAsync(keyed("race", "race"))));
    for (const r of runs) expect(r.code).toBe(0);
    expect(new Set(runs.map((r) => r.json.job_id)).size).toBe(1);
    expect(runs.filter((r) => r.json.launch_resumed === true).length).toBe(1);
    w.sb.run(["wait", runs[0]!.json.job_id]);
    expect(executions("race")).toBe("x\n");
  }, 60_000);
});
