// Job arrays on SSH hosts end to end through the compiled binary against the private sshd (dash user with flock,
// busybox user with the mkdir lock): the throttle sampled on the host while the array runs, per-task results and
// failed indices, AWAITLESS_ARRAY_INDEX in each task's environment, cancel of the whole array.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { sampleQueue } from "../local/queue-sampler.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH array e2e tests (private OpenSSH server)", sshdAvailable());

interface Case {
  title: string;
  user: "dash" | "busybox";
  alias: string;
  lock: "flock" | "mkdir";
  remoteJobDir: string;
}

const run = `${process.pid}-${Date.now()}`;
const CASES: Case[] = [
  {
    title: "dash user",
    user: "dash",
    alias: "box-dash",
    lock: "flock",
    remoteJobDir: `.awl-arrays-${run}-0`,
  },
  {
    title: "busybox user",
    user: "busybox",
    alias: "box-busybox",
    lock: "mkdir",
    remoteJobDir: `.awl-arrays-${run}-1`,
  },
];

let w: SshWorld;

function homeOf(user: string): string {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const home = line?.split(":")[5];
  if (!home) throw new Error(`no home directory for ${user} in /etc/passwd`);
  return home;
}

const rootOf = (c: Case) => join(homeOf(w.sshd.users[c.user]), c.remoteJobDir);

if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    w.sb.writeConfig(
      CASES.map((c) => `[hosts.${c.alias}]\nremote_job_dir = "~/${c.remoteJobDir}"\n`).join("\n"),
    );
  });
  afterAll(async () => {
    if (!w) return;
    const active =
      (await w.sb.runAsync(["list", "--json", "--state", "active", "--limit", "10000"])).json?.jobs ?? [];
    for (const j of active) await w.sb.runAsync(["cancel", "--grace-period", "0", j.job_id]);
    for (const c of CASES) rmSync(rootOf(c), { recursive: true, force: true });
    await w.close();
  });
}

describe.each(runE2e ? CASES : [])("ssh arrays: $title", (c) => {
  const env = () => ({ ...w.sb.env, ...(c.lock === "mkdir" ? { AWAITLESS_QUEUE_LOCK: "mkdir" } : {}) });
  // Always async: a blocking run would stop this process from draining sshd's log pipe, and sshd would stall.
  const cli = (args: string[]) => w.sb.runAsync(args, { env: env() });
  const submitArray = async (array: string, argv: string[]) => {
    const r = await cli(["submit", "--json", "--host", c.alias, "--array", array, "--", ...argv]);
    if (r.code !== 0) throw new Error(`submit --array failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json.job_id as string;
  };
  const tasksOf = async (id: string) => {
    const r = await cli(["inspect", "--json", id]);
    if (r.code !== 0) throw new Error(`inspect failed: ${r.stderr}`);
    return r.json.task_list as { index: number; job_id: string; state: string; exit_code: number | null }[];
  };

  test("at most %N tasks run at once (sampled on the host), each with its index; failed indices in wait", async () => {
    // Each task waits for the gate, which opens once a sample saw 2 running and the other 6 waiting in line.
    const gate = join(rootOf(c), "throttle-gate");
    const id = await submitArray("0-7%2", [
      "sh",
      "-c",
      `echo "index=$AWAITLESS_ARRAY_INDEX"; while [ ! -e ${gate} ]; do sleep 0.1; done; [ "$AWAITLESS_ARRAY_INDEX" != 6 ]`,
    ]);
    const tasks = await tasksOf(id);
    expect(tasks.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const ids = tasks.map((t) => t.job_id);
    const sample = await sampleQueue(
      rootOf(c),
      () => ids,
      () => ids.every((t) => existsSync(join(rootOf(c), "jobs", t, "exit"))),
      { gate: { path: gate, limit: 2 } },
    );
    expect(sample.sawFull).toBe(true);
    expect(sample.maxRunningCommands).toBe(2);
    expect(sample.fifoViolations).toEqual([]);
    const wr = await cli(["wait", "--json", "--timeout", "60s", id]);
    expect(wr.code).toBe(3);
    expect(wr.json).toMatchObject({
      job_id: id,
      state: "failed",
      wait_state: "complete",
      tasks: 8,
      counts: { succeeded: 7, failed: 1 },
      failed_indices: [6],
    });
    const three = await cli(["wait", "--json", `${id}.3`]);
    expect(three.json).toMatchObject({ state: "succeeded", exit_code: 0, stdout_tail: "index=3\n" });
    const six = await cli(["status", "--json", `${id}.6`]);
    expect(six.json).toMatchObject({ state: "failed", exit_code: 1, host: c.alias });
  }, 120_000);

  test("cancel of the array cancels every task not ended; waiting tasks never start", async () => {
    const id = await submitArray("0-4%2", ["sleep", "60"]);
    const tasks = await tasksOf(id);
    await until(
      "two tasks running",
      async () => (await tasksOf(id)).filter((t) => t.state === "running").length === 2,
      30_000,
    );
    const r = await cli(["cancel", "--json", "--grace-period", "1s", id]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ job_state: "cancelled", cancel_requested: 5 });
    expect(r.json.array.counts).toEqual({ cancelled: 5 });
    const started = tasks.filter((t) => existsSync(join(rootOf(c), "jobs", t.job_id, "started")));
    expect(started.length).toBe(2);
  }, 120_000);
});
