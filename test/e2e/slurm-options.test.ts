// The sbatch options users need, through the compiled binary on the test cluster: what Slurm received for
// mem_per_cpu, licenses and exclusive; a misspelt key refused before any sbatch; a GPU request Slurm refuses.
import { afterAll, describe, expect, test } from "bun:test";
import type { Sandbox } from "../helpers/cli.ts";
import { faultRigUp, LOW, scontrolField, slurmSandbox } from "./slurm-faults-rig.ts";
import { run, slurmJobIdOf } from "./slurm-harness.ts";

const up = await faultRigUp("Slurm options e2e");

describe.skipIf(!up)("Slurm options on the test cluster", () => {
  const s: Sandbox | null = up ? slurmSandbox() : null;
  const slurmIds: string[] = [];
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    s?.cleanup();
  });
  const submit = (opts: string[], argv = ["sh", "-c", "echo opts-ok"]) =>
    s!.run([
      "submit",
      "--json",
      "--host",
      "localhost",
      ...opts.flatMap((o) => ["--slurm-option", o]),
      "--",
      ...argv,
    ]);

  test("mem_per_cpu, licenses and exclusive reach Slurm as asked", async () => {
    const r = submit([`partition=${LOW}`, "mem-per-cpu=64M", "licenses=awl_lic:1", "exclusive=yes"]);
    expect(r.code).toBe(0);
    const sid = await slurmJobIdOf(() => s!.status(r.json.job_id));
    slurmIds.push(sid);
    expect(await scontrolField(sid, "MinMemoryCPU")).toBe("64M");
    expect(await scontrolField(sid, "Licenses")).toBe("awl_lic:1");
    expect(await scontrolField(sid, "OverSubscribe")).toBe("NO");
    const w = await s!.runAsync(["wait", "--json", "--timeout", "60s", r.json.job_id]);
    expect(w.json.state).toBe("succeeded");
  }, 90_000);

  test("a misspelt key is refused with the nearest one, and no job is created", () => {
    const before = s!.jobCount();
    const r = submit(["gpu=1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown --slurm-option "gpu" (did you mean `gpus`?)');
    expect(s!.jobCount()).toBe(before);
    const both = submit(["mem=1G", "mem_per_cpu=1G"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("Give mem (per node) or mem_per_cpu (per CPU), not both.");
  });

  test("a GPU request on a cluster without GPUs: sbatch's refusal is the launch error", () => {
    const r = submit([`partition=${LOW}`, "gpus=1"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/sbatch on localhost refused the job/);
    expect(r.stderr).toMatch(/gres|generic resource|node configuration/i);
  });
});
