// Event-driven completion through the binary against the real Slurm: with a 60 s poll interval, the login side's
// watch of the job directory delivers the result with no further poll round (squeue/sacct counted by PATH wrappers,
// test/e2e/slurm-call-log.ts); sacct's OUT_OF_MEMORY still wins over a plain exit record; slurm_watch = false falls
// back to polling and doctor and inspect say so.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
import { CallLog } from "./slurm-call-log.ts";
import { makeRig, memoryNotEnforced, run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm event-driven completion e2e");
const notEnforced = up ? await memoryNotEnforced() : undefined;

/** A sandbox whose squeue/sacct calls are counted, its cluster job dir under its root. */
function sandbox(intervalS: number, hostExtra = ""): { s: Sandbox; calls: CallLog; cluster: string } {
  const s = new Sandbox();
  const calls = new CallLog(join(s.root, "calls"));
  s.env.PATH = calls.path();
  const cluster = join(s.root, "cluster");
  s.writeConfig(
    `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = ${intervalS}\nslurm_min_poll_interval_seconds = ${intervalS}\n[hosts.localhost]\nbackend = "slurm"\ntransport = "local"\nslurm_job_dir = "${cluster}"\nslurm_accounting_grace = 20\n${hostExtra}`,
  );
  return { s, calls, cluster };
}

describe.skipIf(!up)("event-driven completion (real Slurm)", () => {
  const boxes: Sandbox[] = [];
  const slurmIds: string[] = [];
  const pids: number[] = [];
  afterAll(async () => {
    for (const pid of pids) killQuietly(pid);
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    for (const b of boxes) b.cleanup();
  });

  /** Submits a job that runs until `marker` exists; back once the wrapper's started record is in the job dir. */
  async function runningJob(
    s: Sandbox,
    cluster: string,
    script: string,
    marker: string,
    extra: string[] = [],
  ): Promise<string> {
    const id = s.submit(
      ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.2; done; ${script}`],
      ["--backend", "slurm", "--host", "localhost", ...extra],
    );
    slurmIds.push(await slurmJobIdOf(() => s.status(id)));
    await until(
      "the wrapper's started record",
      () => existsSync(join(cluster, "jobs", id, "started")),
      90_000,
      100,
    );
    return id;
  }

  test("60 s interval: the result arrives with no poll round after the exit; sacct confirmed it; inspect and doctor say events", async () => {
    const { s, calls, cluster } = sandbox(60);
    boxes.push(s);
    const marker = join(s.work, "go");
    const id = await runningJob(s, cluster, "echo bye; exit 3", marker, ["--slurm-option", "mem=16M"]);
    const slurmId = slurmIds.at(-1)!;
    const w = s.spawn(["wait", "--json", "--timeout", "25", id]);
    pids.push(w.pid);
    const exitAt = Date.now();
    await Bun.write(marker, "");
    const out = await new Response(w.stdout).text();
    await w.exited;
    const r = JSON.parse(out);
    // the plain exit waits up to exit_settle (30 s) for Slurm's word: only sacct asked at once ends it within 25 s
    expect(r.job_state).toBe("failed");
    expect(r.exit_code).toBe(3);
    expect(r.stdout_tail).toContain("bye");
    // no poll round (squeue) since the exit: the next one was not due before the interval had passed
    expect(calls.count("squeue", exitAt)).toBe(0);
    // sacct was asked about this job alone, and it said the job ended
    const confirms = calls
      .calls(exitAt)
      .filter((c) => c.program === "sacct" && c.args.includes(`--jobs=${slurmId}`));
    expect(confirms.length).toBeGreaterThanOrEqual(1);

    const inspect = s.run(["inspect", id]);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain(
      "completion  ended as seen by the login node's watch of the job directory",
    );
    const json = s.run(["inspect", "--json", id]);
    expect(json.json.job.backend_id.completion).toBe("watch");
    const doctor = s.run(["doctor", "--host", "localhost"]);
    expect(doctor.stdout).toContain("localhost: completion");
    expect(doctor.stdout).toContain("events: this machine (the login node) watches slurm_job_dir");
  }, 180_000);

  test("one process submits and waits (as an MCP server does), 60 s interval and floor: the watch ends the wait", async () => {
    const rig = makeRig({ pollIntervalMs: 60_000 });
    try {
      const marker = join(rig.root, "go");
      const submit = (argv: string[]) =>
        rig.service.submit({
          argv,
          backend: "slurm",
          host: "localhost",
          cwd: rig.root,
          allow_duplicate: true,
          slurm_options: { mem: "16M" },
        });
      // a first job makes this process's first round: the floor then keeps the next one 60 s away
      const first = await submit(["true"]);
      slurmIds.push((rig.service.getJob(first.job_id).backend_id as { slurm_job_id: string }).slurm_job_id);
      expect((await rig.service.wait(first.job_id, { timeoutMs: 60_000 })).job_state).toBe("succeeded");
      const { job_id: id } = await submit([
        "sh",
        "-c",
        `while [ ! -e ${marker} ]; do sleep 0.2; done; exit 6`,
      ]);
      const bid = rig.service.getJob(id).backend_id as { slurm_job_id: string; remote_dir: string };
      slurmIds.push(bid.slurm_job_id);
      await until(
        "the wrapper's started record",
        () => existsSync(join(bid.remote_dir, "started")),
        90_000,
        100,
      );
      const waited = rig.service.wait(id, { timeoutMs: 25_000 });
      const exitAt = Date.now();
      await Bun.write(marker, "");
      const r = await waited;
      // the floor keeps the job's first round 60 s from the submission's: only the watch ends this wait in 25 s
      expect(r.job_state).toBe("failed");
      expect(r.exit_code).toBe(6);
      expect(rig.runner.calls.filter((c) => c.atMs >= exitAt && c.program === "squeue")).toHaveLength(0);
    } finally {
      rig.close();
    }
  }, 180_000);

  test.skipIf(notEnforced !== undefined)(
    "60 s interval: a shell that outlives its OOM-killed child and exits 0 still ends out_of_memory (sacct wins)",
    async () => {
      const { s, calls, cluster } = sandbox(60);
      boxes.push(s);
      const marker = join(s.work, "go");
      // perl grows one string to 400 MB; the job may use 50 MB ($ escaped from the job's sh)
      const hog = "\\$x = 'x' x (400 * 1024 * 1024); sleep 1";
      const id = await runningJob(s, cluster, `perl -e "${hog}"; echo after-oom`, marker, [
        "--slurm-option",
        "mem=50M",
      ]);
      const w = s.spawn(["wait", "--json", "--timeout", "25", id]);
      pids.push(w.pid);
      const exitAt = Date.now();
      await Bun.write(marker, "");
      const r = JSON.parse(await new Response(w.stdout).text());
      await w.exited;
      expect(r.job_state).toBe("failed");
      expect(r.reason).toBe("out_of_memory");
      expect(r.exit_code).toBe(0);
      expect(r.stdout_tail).toContain("after-oom");
      expect(calls.count("squeue", exitAt)).toBe(0);
      expect(s.run(["inspect", "--json", id]).json.job.backend_id.completion).toBe("watch");
    },
    180_000,
  );

  test("slurm_watch = false: polling only, the result comes with a poll round; inspect and doctor say so", async () => {
    const { s, calls, cluster } = sandbox(2, "slurm_watch = false\n");
    boxes.push(s);
    const marker = join(s.work, "go");
    const id = await runningJob(s, cluster, "exit 4", marker, ["--slurm-option", "mem=16M"]);
    const active = s.run(["inspect", id]);
    expect(active.stdout).toContain("completion  polling only (slurm_watch = false in [hosts.localhost])");
    const doctor = s.run(["doctor", "--host", "localhost"]);
    expect(doctor.stdout).toContain("polling only (slurm_watch = false in [hosts.localhost])");
    const w = s.spawn(["wait", "--json", "--timeout", "120", id]);
    pids.push(w.pid);
    const exitAt = Date.now();
    await Bun.write(marker, "");
    const r = JSON.parse(await new Response(w.stdout).text());
    await w.exited;
    expect(r.job_state).toBe("failed");
    expect(r.exit_code).toBe(4);
    expect(calls.count("squeue", exitAt)).toBeGreaterThanOrEqual(1);
    expect(s.run(["inspect", "--json", id]).json.job.backend_id.completion).toBe("poll");
  }, 180_000);
});
