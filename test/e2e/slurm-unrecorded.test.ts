// A Slurm job COMPLETED without the wrapper's exit record is not `succeeded`: the wrapper exits 0 after writing its
// record, so COMPLETED says nothing about the command; after slurm_accounting_grace it is lost (exit_not_recorded).
import { afterAll, describe, expect, test } from "bun:test";
import type { StoredJob } from "../../src/core/store/job-store.ts";
import { makeRig, type Rig, run, sacctState, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm missing exit record e2e");

describe.skipIf(!up)("a Slurm job that ends without an exit record", () => {
  let rig: Rig | undefined;
  const slurmIds: string[] = [];
  const slurmId = (job: StoredJob) =>
    (job.backend_id as { slurm_job_id?: string } | null)?.slurm_job_id ?? "";
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    rig?.close();
  });

  test("COMPLETED in sacct, no exit record → lost exit_not_recorded, exit code null (never an invented 0)", async () => {
    rig = makeRig({ host: { slurm_accounting_grace: 2 } });
    // a directory where the exit record goes: the wrapper's rename lands inside it, and it exits 0 as always
    const r = await rig.service.submit({
      argv: ["sh", "-c", 'mkdir "$AWAITLESS_JOB_DIR/exit"; echo ran'],
      backend: "slurm",
      host: "localhost",
      cwd: rig.root,
      allow_duplicate: true,
    });
    slurmIds.push(slurmId(rig.service.getJob(r.job_id)));
    const res = await rig.service.wait(r.job_id, { timeoutMs: 90_000 });
    expect(res.job_state).toBe("lost");
    expect(res.reason).toBe("exit_not_recorded");
    expect(res.exit_code).toBeNull();
    expect(res.error?.detail).toContain("the wrapper recorded no exit status");
    expect((await sacctState(slurmIds[0]!)).startsWith("COMPLETED")).toBe(true);
  }, 120_000);
});
