// The Slurm backend end to end against the real test cluster, through the JobService, with the local runner (as root).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { slurmCommentTag } from "../../src/backends/slurm/sbatch-script.ts";
import { findTaggedJobs, parseSacct, sacctMineArgs } from "../../src/backends/slurm/slurm-queries.ts";
import type { StoredJob } from "../../src/core/store/job-store.ts";
import { makeRig, type Rig, run, sacctState, slurmUp, until } from "./slurm-harness.ts";

const up = await slurmUp("Slurm backend e2e");

describe.skipIf(!up)("Slurm backend on the test cluster", () => {
  let rig: Rig;
  const slurmIds: string[] = [];
  // the one time-limit test runs alongside the others (it costs 60–90 s of Slurm's own clock)
  let timeoutJob = "";

  const submit = async (argv: string[], extra: Record<string, unknown> = {}) => {
    const r = await rig.service.submit({
      argv,
      backend: "slurm",
      host: "localhost",
      cwd: rig.root,
      allow_duplicate: true,
      ...extra,
    });
    const id = slurmId(rig.service.getJob(r.job_id));
    if (id) slurmIds.push(id);
    return r.job_id;
  };
  const slurmId = (job: StoredJob) =>
    (job.backend_id as { slurm_job_id?: string } | null)?.slurm_job_id ?? "";
  const waitDone = (jobId: string, timeoutMs = 60_000) => rig.service.wait(jobId, { timeoutMs });

  beforeAll(async () => {
    rig = makeRig();
    timeoutJob = await submit(["sleep", "300"], { slurm_options: { time: "1", mem: "32M" } });
  });
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    rig?.close();
  });

  test("success: queued → succeeded with exit 0, tails from the wrapper", async () => {
    const id = await submit(["sh", "-c", "echo hello from slurm; echo to-stderr >&2"], {
      slurm_options: { mem: "32M" },
    });
    expect(["queued", "starting", "running", "succeeded"]).toContain(rig.service.getJob(id).state);
    const w = await waitDone(id);
    expect(w.job_state).toBe("succeeded");
    expect(w.exit_code).toBe(0);
    expect(w.stdout_tail).toContain("hello from slurm");
    expect(w.stderr_tail).toContain("to-stderr");
    const history = rig.store.history(id).map((h) => h.to_state);
    expect(history[0]).toBe("queued");
    expect(history.at(-1)).toBe("succeeded");
    expect(
      await until(
        "sacct COMPLETED",
        async () =>
          (await sacctState(slurmId(rig.service.getJob(id)))).startsWith("COMPLETED") ? true : undefined,
        10_000,
      ),
    ).toBe(true);
  }, 30_000);

  test("exit 7 → failed with exit code 7; exit 200 keeps its true code (sacct would say 72)", async () => {
    const seven = await submit(["sh", "-c", "exit 7"], { slurm_options: { mem: "32M" } });
    const big = await submit(["sh", "-c", "exit 200"], { slurm_options: { mem: "32M" } });
    const a = await waitDone(seven);
    expect(a.job_state).toBe("failed");
    expect(a.exit_code).toBe(7);
    expect(a.reason).toBe("nonzero_exit");
    const b = await waitDone(big);
    expect(b.exit_code).toBe(200);
  }, 30_000);

  test("held job shows its pending reason; cancel while pending never starts it; cancel while running", async () => {
    // fill the node's free CPU so the next job pends, then hold it
    const blocker = await submit(["sleep", "300"], { slurm_options: { mem: "32M" } });
    await until(
      "blocker running",
      async () => ((await rig.service.refresh(blocker)).state === "running" ? true : undefined),
      20_000,
    );
    const held = await submit(["sh", "-c", "echo should-never-run"], { slurm_options: { mem: "32M" } });
    const heldSlurm = slurmId(rig.service.getJob(held));
    expect((await run(["scontrol", "hold", heldSlurm])).code).toBe(0);
    const shown = await until(
      "the hold reason in status_message",
      async () => {
        const j = await rig.service.refresh(held);
        return j.status_message?.includes("JobHeld") ? j : undefined;
      },
      15_000,
    );
    expect(shown.state).toBe("queued");
    expect(shown.status_message).toContain(`Slurm job ${heldSlurm} pending`);

    const c1 = await rig.service.cancel(held, 1);
    expect(c1.job_state).toBe("cancelled");
    expect((await sacctState(heldSlurm)).startsWith("CANCELLED")).toBe(true);
    const dir = (rig.service.getJob(held).backend_id as { remote_dir: string }).remote_dir;
    expect(existsSync(join(dir, "started"))).toBe(false);

    const c2 = await rig.service.cancel(blocker, 1);
    expect(c2.job_state).toBe("cancelled");
    expect(c2.result?.reason).toBe("cancelled");
    const blockerSlurm = slurmId(rig.service.getJob(blocker));
    await until(
      "sacct CANCELLED",
      async () => ((await sacctState(blockerSlurm)).startsWith("CANCELLED") ? true : undefined),
      10_000,
    );
    // the pending job never ran, even after the node freed up
    expect(existsSync(join(dir, "started"))).toBe(false);
  }, 60_000);

  test("a lost sbatch reply is adopted by tag: exactly one Slurm job carries the tag", async () => {
    rig.runner.cutAfter = "sbatch";
    const before = rig.runner.count("sbatch");
    const id = await submit(["sh", "-c", "echo adopted"], { slurm_options: { mem: "32M" } });
    expect(rig.runner.count("sbatch")).toBe(before + 1);
    const job = rig.service.getJob(id);
    expect((job.backend_id as { adopted?: boolean }).adopted).toBe(true);
    const w = await waitDone(id);
    expect(w.job_state).toBe("succeeded");
    expect(w.stdout_tail).toContain("adopted");
    expect(rig.runner.count("sbatch")).toBe(before + 1);
    const tagged = await until(
      "the tagged job in sacct",
      async () => {
        const r = await run(sacctMineArgs(new Date(Date.parse(job.created_at))));
        const rows = parseSacct(r.stdout).filter(
          (row) => row.step === undefined && row.comment === slurmCommentTag(id),
        );
        return rows.length > 0 ? findTaggedJobs(rows, id) : undefined;
      },
      15_000,
    );
    expect(tagged).toEqual([slurmId(job)]);
  }, 30_000);

  test("20 active jobs: one squeue and one sacct per poll interval for all of them", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(await submit(["sleep", "120"], { slurm_options: { mem: "16M" }, name: `many-${i}` }));
    const slurm = ids.map((id) => slurmId(rig.service.getJob(id)));
    const interval = 500;
    const since = Date.now();
    await Promise.all(ids.map((id) => rig.service.wait(id, { timeoutMs: 4 * interval })));
    const elapsed = Date.now() - since;
    const squeues = rig.runner.calls.filter((c) => c.program === "squeue" && c.atMs >= since);
    const saccts = rig.runner.calls.filter((c) => c.program === "sacct" && c.atMs >= since);
    expect(squeues.length).toBeGreaterThanOrEqual(2);
    expect(squeues.length).toBe(saccts.length);
    expect(squeues.length).toBeLessThanOrEqual(Math.ceil(elapsed / interval) + 1);
    for (let i = 1; i < squeues.length; i++) {
      expect(squeues[i]!.atMs - squeues[i - 1]!.atMs).toBeGreaterThanOrEqual(interval - 50);
    }
    for (const c of squeues) for (const s of slurm) expect(c.argv.join(" ")).toContain(s);
    await run(["scancel", ...slurm]);
  }, 60_000);

  test("time limit (--time=1) → timed_out with reason time_limit", async () => {
    const w = await waitDone(timeoutJob, 150_000);
    expect(w.job_state).toBe("timed_out");
    expect(w.reason).toBe("time_limit");
    expect((await sacctState(slurmId(rig.service.getJob(timeoutJob)))).startsWith("TIMEOUT")).toBe(true);
  }, 160_000);
});
