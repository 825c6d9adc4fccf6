// The Slurm backend through the compiled binary: a client killed mid-wait, and recovery of the job from a new process.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm CLI e2e");

describe.skipIf(!up)("Slurm through the binary", () => {
  const sb = up ? new Sandbox() : null;
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });

  test("client killed mid-wait; a new process recovers the exact outcome", async () => {
    const s = sb!;
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const marker = join(s.work, "go");
    const id = s.submit(
      ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.2; done; echo finished; exit 3`],
      ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"],
    );
    const slurmJobId = await slurmJobIdOf(() => s.status(id));
    submitted.push(slurmJobId);
    expect(slurmJobId).toMatch(/^\d+$/);

    const waiter = s.spawn(["wait", "--json", id]);
    // a loaded 2-core machine can take a while to schedule and start the batch job
    await until("the job running", () => s.status(id).state === "running", 45_000);
    waiter.kill("SIGKILL");
    expect(await waiter.exited).not.toBe(0);

    // the job is unaffected by its client's death
    expect((await run(["squeue", "-h", "-j", `${slurmJobId},${slurmJobId}`, "-o", "%T"])).stdout.trim()).toBe(
      "RUNNING",
    );
    await Bun.write(marker, "");
    const w = await s.runAsync(["wait", "--json", id]);
    expect(w.json.job_state).toBe("failed");
    expect(w.json.exit_code).toBe(3);
    expect(w.json.stdout_tail).toContain("finished");
    expect(w.json.backend).toBe("slurm");
  }, 120_000);

  test("a client killed after reservation: the retry with the same key submits it once", async () => {
    const s = sb!;
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const marker = join(s.work, "slurm-resume");
    const args = [
      "submit",
      "--json",
      "--backend",
      "slurm",
      "--host",
      "localhost",
      "--slurm-option",
      "mem=32M",
      "--client-request-id",
      `slurm-resume-${Date.now()}`,
      "--",
      "sh",
      "-c",
      `echo x >> ${marker}`,
    ];
    expect(s.run(args, { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } }).code).toBe(99);
    const retry = await s.runAsync(args);
    expect(retry.code).toBe(0);
    expect(retry.json.launch_resumed).toBe(true);
    const slurmJobId = await slurmJobIdOf(() => s.status(retry.json.job_id));
    submitted.push(slurmJobId);
    expect(slurmJobId).toMatch(/^\d+$/);
    const again = await s.runAsync(args);
    expect(again.json).not.toHaveProperty("launch_resumed");
    const w = await s.runAsync(["wait", "--json", retry.json.job_id]);
    expect(w.json.state).toBe("succeeded");
    expect(await Bun.file(marker).text()).toBe("x\n");
  }, 120_000);

  test("--host of a [hosts.NAME] backend = slurm host, without --backend, submits to Slurm", async () => {
    const s = sb!;
    s.writeConfig(
      `[defaults]\nbackend = "local"\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nbackend = "slurm"\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const id = s.submit(["sh", "-c", "echo on-slurm"], ["--host", "localhost", "--slurm-option", "mem=32M"]);
    const slurmJobId = await slurmJobIdOf(() => s.status(id));
    submitted.push(slurmJobId);
    expect(slurmJobId).toMatch(/^\d+$/);
    const w = await s.runAsync(["wait", "--json", id]);
    expect(w.json.backend).toBe("slurm");
    expect(w.json.host).toBe("localhost");
    expect(w.json.stdout_tail).toContain("on-slurm");
    // doctor checks the cluster through Slurm's clients on this machine, not over SSH
    const doc = await s.runAsync(["doctor", "--json", "--host", "localhost"]);
    const mine = doc.json.checks.filter((c: { check: string }) => c.check.startsWith("localhost: "));
    expect(mine.map((c: { check: string; ok: boolean }) => [c.check, c.ok])).toEqual([
      ["localhost: scheduler calls", true],
      ["localhost: completion", true],
      ["localhost: tracking", true],
      ["localhost: slurm clients", true],
      ["localhost: slurm controller", true],
    ]);
  }, 120_000);
});
