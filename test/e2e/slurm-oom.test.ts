// Out-of-memory on the test cluster: a job over its --mem ends `failed` with reason `out_of_memory`, also when the
// command outlives the kill of its child and exits 0. Needs Slurm's cgroup task plugin with ConstrainRAMSpace.
import { afterAll, describe, expect, test } from "bun:test";
import type { StoredJob } from "../../src/core/store/job-store.ts";
import { makeRig, memoryNotEnforced, type Rig, run, sacctState, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm out-of-memory e2e");

const notEnforced = up ? await memoryNotEnforced() : undefined;
if (up && notEnforced !== undefined) {
  test.skip(`out-of-memory (skipped: ${notEnforced})`, () => {});
  console.warn(`[skip] Slurm out-of-memory e2e: ${notEnforced}`);
}

// perl grows one string to 400 MB; the job may use 50 MB
const HOG = "$x = 'x' x (400 * 1024 * 1024); sleep 1";

describe.skipIf(!up || notEnforced !== undefined)("out-of-memory on the test cluster (cgroup memory)", () => {
  let rig: Rig;
  const slurmIds: string[] = [];
  const slurmId = (job: StoredJob) =>
    (job.backend_id as { slurm_job_id?: string } | null)?.slurm_job_id ?? "";
  const submit = async (argv: string[]) => {
    const r = await rig.service.submit({
      argv,
      backend: "slurm",
      host: "localhost",
      cwd: rig.root,
      allow_duplicate: true,
      slurm_options: { mem: "50M" },
    });
    slurmIds.push(slurmId(rig.service.getJob(r.job_id)));
    return r.job_id;
  };
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    rig?.close();
  });

  test("the command is OOM-killed → failed, reason out_of_memory (sacct OUT_OF_MEMORY); a shell that goes on and exits 0 → the same", async () => {
    rig = makeRig();
    const killed = await submit(["perl", "-e", HOG]);
    const survived = await submit(["sh", "-c", 'perl -e "$1"; echo after-oom', "sh", HOG]);
    const [a, b] = await Promise.all([
      rig.service.wait(killed, { timeoutMs: 60_000 }),
      rig.service.wait(survived, { timeoutMs: 60_000 }),
    ]);

    expect(a.job_state).toBe("failed");
    expect(a.reason).toBe("out_of_memory");
    expect(a.signal).toBe("KILL");
    expect(a.exit_code).toBe(137);
    expect(a.error?.suggestion).toContain("Slurm mem option");
    expect((await sacctState(slurmId(rig.service.getJob(killed)))).startsWith("OUT_OF_MEMORY")).toBe(true);

    // the shell saw its child die and exited 0, but Slurm flags the job OUT_OF_MEMORY: Slurm's word wins
    expect(b.job_state).toBe("failed");
    expect(b.reason).toBe("out_of_memory");
    expect(b.exit_code).toBe(0);
    expect(b.stdout_tail).toContain("after-oom");
    expect(b.error?.detail).toContain("the command itself exited with code 0");
    expect((await sacctState(slurmId(rig.service.getJob(survived)))).startsWith("OUT_OF_MEMORY")).toBe(true);
  }, 90_000);
});
