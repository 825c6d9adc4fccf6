// Named queues end to end through the compiled binary: create/list, FIFO admission with bounded concurrency
// across client processes, cancel while queued, a killed wrapper, timeouts from admission, resources, config.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";
import { sampleQueue } from "./queue-sampler.ts";

const sandboxes: Sandbox[] = [];
function sandbox(env: Record<string, string> = {}): Sandbox {
  const sb = new Sandbox(env);
  sandboxes.push(sb);
  return sb;
}
afterAll(() => {
  for (const sb of sandboxes) {
    const active = sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
    for (const j of active) sb.run(["cancel", "--grace-period", "0", j.job_id]);
    // A job whose wrapper a test killed is `lost`, so cancel leaves it alone: stop its command's group by PID.
    const jobsDir = join(sb.dataDir, "jobs");
    for (const id of existsSync(jobsDir) ? readdirSync(jobsDir) : []) {
      if (existsSync(join(jobsDir, id, "exit")) || !existsSync(join(jobsDir, id, "started"))) continue;
      const pgid = startedOf(sb, id).pgid;
      if (pgid > 1) killQuietly(-pgid);
    }
    sb.cleanup();
  }
});

/** The wrapper's started record of a job: its own pid and the command's process group. */
function startedOf(sb: Sandbox, id: string): { wrapper_pid: number; pgid: number } {
  const text = readFileSync(join(sb.dataDir, "jobs", id, "started"), "utf8");
  const field = (k: string) => Number(new RegExp(`^${k}=(\\d+)$`, "m").exec(text)?.[1]);
  return { wrapper_pid: field("wrapper_pid"), pgid: field("pgid") };
}

function state(sb: Sandbox, id: string): string {
  return sb.status(id).state as string;
}

async function allDone(sb: Sandbox, ids: string[]): Promise<boolean> {
  const r = await sb.runAsync(["list", "--json", "--state", "active", "--limit", "10000"]);
  const active = new Set((r.json?.jobs ?? []).map((j: { job_id: string }) => j.job_id));
  return ids.every((id) => !active.has(id));
}

describe("queue create and list", () => {
  const sb = sandbox();

  test("create is idempotent for the same concurrency and refuses another, naming the existing one", () => {
    expect(sb.run(["queue", "create", "gpu", "--concurrency", "2", "--json"]).json).toMatchObject({
      name: "gpu",
      target: "local",
      concurrency: 2,
      created: true,
    });
    expect(sb.run(["queue", "create", "gpu", "--concurrency", "2", "--json"]).json.created).toBe(false);
    const r = sb.run(["queue", "create", "gpu", "--concurrency", "3"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("already exists with concurrency 2");
  });

  test("bad names, unknown queues and Slurm are refused before anything runs", () => {
    expect(sb.run(["queue", "create", "a/b", "--concurrency", "1"]).stderr).toContain("bad queue name");
    const missing = sb.run(["submit", "--queue", "nope", "--", "true"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("queue create nope");
    const slurm = sb.run(["submit", "--backend", "slurm", "--host", "h", "--queue", "gpu", "--", "true"]);
    expect(slurm.code).toBe(2);
    expect(slurm.stderr).toContain("Slurm");
    expect(sb.run(["submit", "--resource", "gpu", "--", "true"]).stderr).toContain("bad resource");
    expect(sb.jobCount()).toBe(0);
  });
});

for (const lock of ["flock", "mkdir"] as const) {
  describe(`admission (${lock} lock)`, () => {
    const sb = sandbox(lock === "mkdir" ? { AWAITLESS_QUEUE_LOCK: "mkdir" } : {});
    sb.run(["queue", "create", "pair", "--concurrency", "2"]);

    test("10 jobs into concurrency 2 never exceed 2 and start in FIFO order", async () => {
      // Each job ends once the gate exists, which opens when a sample saw 2 running and the other 8 waiting in line.
      const gate = join(sb.work, "pair-gate");
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push(
          sb.submit(
            ["sh", "-c", `while [ ! -e ${gate} ]; do sleep 0.05; done`],
            ["--queue", "pair", "--name", `n${i}`],
          ),
        );
      expect(state(sb, ids[9]!)).toBe("queued");
      expect(sb.status(ids[9]!).status_message).toMatch(/queued behind \d+ jobs? in queue pair/);
      const report = await sampleQueue(
        sb.dataDir,
        () => ids,
        () => allDone(sb, ids),
        { gate: { path: gate, limit: 2 } },
      );
      expect(report.sawFull).toBe(true);
      expect(report.maxRunningEntries).toBe(2);
      expect(report.maxRunningCommands).toBe(2);
      expect(report.fifoViolations).toEqual([]);
      const started = ids.map((id) => {
        const job = sb.run(["inspect", "--json", id]).json;
        expect(job.result.state).toBe("succeeded");
        // no daemon: a job that started and ended between two looks goes from queued straight to succeeded
        const states = job.history.map((h: { to_state: string }) => h.to_state);
        expect(states[0]).toBe("queued");
        expect(states.at(-1)).toBe("succeeded");
        return Date.parse(job.job.started_at);
      });
      for (let i = 2; i < 10; i++) expect(started[i]!).toBeGreaterThanOrEqual(started[i - 2]!);
      const list = sb.run(["queue", "list", "--json"]).json.queues[0];
      expect(list).toMatchObject({ name: "pair", concurrency: 2, running: 0, queued: 0 });
      expect(list.mean_runtime_seconds).toBeGreaterThan(0);
    }, 90_000);

    test("two client processes submitting into one queue concurrently", async () => {
      const bin = join(import.meta.dir, "..", "..", "dist", "awaitless");
      // each job ends once the gate exists, which opens when a sample saw 2 running and the other 8 waiting in line
      const gate = join(sb.work, "clients-gate");
      const job = `sh -c 'while [ ! -e ${gate} ]; do sleep 0.05; done'`;
      const script = `for i in 1 2 3 4 5; do "${bin}" submit --queue pair -- ${job} || exit 1; done`;
      const clients = [0, 1].map(() =>
        Bun.spawn(["sh", "-c", script], { cwd: sb.work, env: sb.env, stdout: "pipe", stderr: "pipe" }),
      );
      const outputs = await Promise.all(clients.map((c) => new Response(c.stdout).text()));
      expect(await Promise.all(clients.map((c) => c.exited))).toEqual([0, 0]);
      const ids = outputs
        .join("")
        .split("\n")
        .filter((l) => l.startsWith("job_"));
      expect(ids.length).toBe(10);
      const report = await sampleQueue(
        sb.dataDir,
        () => ids,
        () => allDone(sb, ids),
        { gate: { path: gate, limit: 2 } },
      );
      expect(report.sawFull).toBe(true);
      expect(report.maxRunningEntries).toBe(2);
      expect(report.maxRunningCommands).toBe(2);
      expect(report.fifoViolations).toEqual([]);
      for (const id of ids) expect(state(sb, id)).toBe("succeeded");
    }, 90_000);
  });
}

describe("queued jobs", () => {
  const sb = sandbox();
  sb.run(["queue", "create", "one", "--concurrency", "1"]);
  const gate = join(sb.work, "go");
  const blocker = ["sh", "-c", `while [ ! -e ${gate} ]; do sleep 0.05; done`];

  test("run --detach-after into a busy queue detaches at once; cancelling a queued job means it never runs", async () => {
    const first = sb.submit(blocker, ["--queue", "one"]);
    await until("the first job to run", () => state(sb, first) === "running");
    const t0 = Date.now();
    const r = sb.run([
      "run",
      "--json",
      "--detach-after",
      "1m",
      "--queue",
      "one",
      "--",
      "sh",
      "-c",
      "touch ran-cancelled",
    ]);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(r.json).toMatchObject({ delivery: "detached", detach_reason: "queued", job_state: "queued" });
    const third = sb.submit(["sh", "-c", "echo third"], ["--queue", "one"]);
    const c = sb.run(["cancel", "--json", r.json.job_id]);
    expect(c.json.job_state).toBe("cancelled");
    const result = sb.run(["wait", "--json", r.json.job_id]).json;
    expect(result).toMatchObject({ state: "cancelled", exit_code: null, started_at: null });
    Bun.write(gate, "");
    expect(sb.run(["wait", "--json", third]).json.stdout_tail).toBe("third\n");
    expect(existsSync(join(sb.work, "ran-cancelled"))).toBe(false);
  }, 30_000);

  test("kill -9 of a running job's wrapper and command frees the slot: the next job is admitted", async () => {
    const victim = sb.submit(["sleep", "300"], ["--queue", "one"]);
    await until("the victim to run", () => state(sb, victim) === "running");
    const next = sb.submit(["sh", "-c", "echo next"], ["--queue", "one"]);
    expect(state(sb, next)).toBe("queued");
    const id = startedOf(sb, victim);
    killQuietly(id.wrapper_pid);
    killQuietly(-id.pgid);
    await until("the wrapper to be gone", () => !pidAlive(id.wrapper_pid));
    expect(sb.run(["wait", "--json", "--timeout", "20s", next]).json.stdout_tail).toBe("next\n");
    expect(state(sb, victim)).toBe("lost");
  }, 40_000);

  test("kill -9 of the wrapper alone keeps the slot until its command ends", async () => {
    const victim = sb.submit(
      ["sh", "-c", `while [ ! -e ${gate}2 ]; do sleep 0.05; done`],
      ["--queue", "one"],
    );
    await until("the victim to run", () => state(sb, victim) === "running");
    const next = sb.submit(["sh", "-c", "echo after"], ["--queue", "one"]);
    const id = startedOf(sb, victim);
    killQuietly(id.wrapper_pid);
    await until("the wrapper to be gone", () => !pidAlive(id.wrapper_pid));
    await Bun.sleep(1500);
    expect(state(sb, next)).toBe("queued");
    Bun.write(`${gate}2`, "");
    expect(sb.run(["wait", "--json", "--timeout", "20s", next]).json.stdout_tail).toBe("after\n");
  }, 40_000);

  test("the runtime timeout starts at admission", async () => {
    const gate3 = `${gate}3`;
    const first = sb.submit(["sh", "-c", `while [ ! -e ${gate3} ]; do sleep 0.05; done`], ["--queue", "one"]);
    await until("the first job to run", () => state(sb, first) === "running");
    const timed = sb.submit(["sh", "-c", "sleep 1; echo in-time"], ["--queue", "one", "--timeout", "3s"]);
    await Bun.sleep(3500);
    expect(state(sb, timed)).toBe("queued");
    Bun.write(gate3, "");
    const r = sb.run(["wait", "--json", timed]).json;
    expect(r).toMatchObject({ state: "succeeded", stdout_tail: "in-time\n" });
  }, 30_000);

  test("resources: one holder at a time, the command sees what it holds", async () => {
    const gate4 = `${gate}4`;
    const a = sb.submit(
      ["sh", "-c", `echo "$AWAITLESS_RESOURCES"; while [ ! -e ${gate4} ]; do sleep 0.05; done`],
      ["--resource", "gpu=0"],
    );
    await until("a to run", () => state(sb, a) === "running");
    const b = sb.submit(
      ["sh", "-c", 'echo "$AWAITLESS_RESOURCES"'],
      ["--resource", "gpu=1", "--resource", "gpu=0"],
    );
    expect(state(sb, b)).toBe("queued");
    expect(sb.status(b).status_message).toContain("gpu=0");
    Bun.write(gate4, "");
    expect(sb.run(["wait", "--json", a]).json.stdout_tail).toBe("gpu=0\n");
    expect(sb.run(["wait", "--json", b]).json.stdout_tail).toBe("gpu=0,gpu=1\n");
  }, 30_000);

  test("[defaults] queue puts a plain run into the operator's queue", () => {
    sb.writeConfig('[defaults]\nqueue = "one"\n');
    try {
      const r = sb.run(["run", "--json", "--", "sh", "-c", "echo $AWAITLESS_QUEUE"]);
      expect(r.json.stdout_tail).toBe("one\n");
      const listed = sb.run(["list", "--json", "--queue", "one", "--limit", "1"]).json.jobs[0];
      expect(listed.job_id).toBe(r.json.job_id);
    } finally {
      sb.writeConfig("");
    }
    expect(readFileSync(sb.env.AWAITLESS_CONFIG!, "utf8")).toBe("");
  });
});
