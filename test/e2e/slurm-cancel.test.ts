// Cancel on the real test cluster: scancel's TERM is the command's only one and the wrapper outlives it, so the
// command's cleanup runs (KillWait is 5 s there); and a cancel that reaches a job only through its cancel file (the
// batch script starts, the command never does) reports exit_code null, never 0.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ExecOptions, LocalRunner, type RunResult } from "../../src/backends/slurm/runner.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";
import { until as cliUntil, Sandbox } from "../helpers/cli.ts";
import { cleanupIn, termCounter, termsIn } from "../helpers/term-counter.ts";
import {
  makeRig,
  type Rig,
  rigSlurmJobIdOf,
  run,
  sacctState,
  slurmJobIdOf,
  slurmUp,
  until,
} from "./slurm-harness.ts";

const up = await slurmUp("Slurm cancel e2e");

/** Submits every batch job held (`sbatch --hold`), so a test decides when it may start. */
class HoldingRunner extends LocalRunner {
  override exec(argv: readonly string[], opts: ExecOptions): Promise<RunResult> {
    return super.exec(argv[0] === "sbatch" ? ["sbatch", "--hold", ...argv.slice(1)] : argv, opts);
  }
}

describe.skipIf(!up)("cancel on the test cluster", () => {
  const rigs: Rig[] = [];
  const slurmIds: string[] = [];
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    for (const r of rigs) r.close();
  });

  const submit = async (rig: Rig, argv: string[]) => {
    const r = await rig.service.submit({
      argv,
      backend: "slurm",
      host: "localhost",
      cwd: rig.root,
      allow_duplicate: true,
      slurm_options: { mem: "32M" },
    });
    const slurmId = await rigSlurmJobIdOf(rig, r.job_id);
    slurmIds.push(slurmId);
    const bid = rig.service.getJob(r.job_id).backend_id as { remote_dir: string };
    return { id: r.job_id, slurmId, dir: bid.remote_dir };
  };

  test("a running job: scancel's TERM reaches only the wrapper, which outlives it; the command gets one TERM and its cleanup completes", async () => {
    const rig = makeRig();
    rigs.push(rig);
    const job = await submit(rig, termCounter('"$AWAITLESS_JOB_DIR"'));
    await until(
      "the command's ready",
      async () =>
        (await rig.backend.readTail(rig.service.getJob(job.id), "stdout", 100)).totalBytes > 0
          ? true
          : undefined,
      60_000,
    );
    const c = await rig.service.cancel(job.id, 30);
    expect(c.job_state).toBe("cancelled");
    expect(c.result?.reason).toBe("cancelled");
    expect(termsIn(job.dir)).toBe(1);
    expect(cleanupIn(job.dir)).toBe("cleaned up after 1 TERM\n");
    expect(c.result?.exit_code).toBe(0);
    expect((await sacctState(job.slurmId)).startsWith("CANCELLED")).toBe(true);
  }, 90_000);

  test("through the binary: `awaitless cancel` of a running Slurm job, one TERM and the cleanup completes", async () => {
    const sb = new Sandbox();
    try {
      sb.writeConfig(
        `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(sb.root, "cluster")}"\n`,
      );
      const id = sb.submit(termCounter('"$AWAITLESS_JOB_DIR"'), [
        "--backend",
        "slurm",
        "--host",
        "localhost",
        "--slurm-option",
        "mem=32M",
      ]);
      slurmIds.push(await slurmJobIdOf(() => sb.status(id)));
      const bid = sb.status(id).backend_id as { remote_dir: string };
      await cliUntil("the command's ready", () => sb.run(["logs", id]).stdout.includes("ready"), 60_000);
      const c = await sb.runAsync(["cancel", "--json", "--grace-period", "30s", id]);
      expect(c.json.job_state).toBe("cancelled");
      expect(termsIn(bid.remote_dir)).toBe(1);
      expect(cleanupIn(bid.remote_dir)).toBe("cleaned up after 1 TERM\n");
    } finally {
      sb.cleanup();
    }
  }, 90_000);

  test("a cancel that reaches the job only through its cancel file: the command never runs, exit_code null", async () => {
    const rig = makeRig({ inner: new HoldingRunner() });
    rigs.push(rig);
    const job = await submit(rig, ["sh", "-c", "echo ran > ran"]);
    // scancel cannot reach Slurm: the cancel is recorded and the job's cancel file written, the job stays held
    rig.runner.blocked.add("scancel");
    const failed = await rig.service.cancel(job.id, 1).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AwaitlessError);
    expect((failed as AwaitlessError).code).toBe("connection_failed");
    expect(existsSync(join(job.dir, "cancel"))).toBe(true);
    // the allocation starts: the batch script runs the wrapper, which never starts the command
    expect((await run(["scontrol", "release", job.slurmId])).code).toBe(0);
    await until(
      "the job to finish in Slurm",
      async () => ((await sacctState(job.slurmId)).startsWith("COMPLETED") ? true : undefined),
      60_000,
    );
    rig.runner.blocked.delete("scancel");
    const w = await rig.service.wait(job.id, { timeoutMs: 60_000 });
    expect(w.job_state).toBe("cancelled");
    expect(w.exit_code).toBeNull();
    expect(w.signal).toBeNull();
    expect(existsSync(join(rig.root, "ran"))).toBe(false);
    expect(existsSync(join(job.dir, "started"))).toBe(false);
  }, 120_000);
});
