// What a new process must not rebuild from scratch lives in backend_id: an ID adopted by tag after a lost sbatch
// reply, and the start of the accounting grace. A second process (new backend, same store) goes on from there.
import { afterAll, describe, expect, test } from "bun:test";
import { type SlurmBackendId, slurmIdOf } from "../../src/core/model/backend-id.ts";
import { makeRig, type Rig, run, slurmUp, until } from "./slurm-harness.ts";

const up = await slurmUp("Slurm backend_id persistence e2e");

describe.skipIf(!up)("Slurm state that survives the process", () => {
  const rigs: Rig[] = [];
  const slurmIds: string[] = [];
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    // the first rig owns the directories: close it last
    for (const r of rigs.reverse()) r.close();
  });
  const bidOf = (rig: Rig, id: string): SlurmBackendId => slurmIdOf(rig.service.getJob(id)) ?? {};
  const submit = async (rig: Rig, argv: string[]) =>
    (
      await rig.service.submit({
        argv,
        backend: "slurm",
        host: "localhost",
        cwd: rig.root,
        allow_duplicate: true,
        slurm_options: { mem: "32M" },
      })
    ).job_id;

  test("an ID adopted by an observation is persisted; a second process uses it without looking for the tag", async () => {
    const a = makeRig({ adoptWindowMs: 0 });
    rigs.push(a);
    // sbatch runs but its reply is lost, and the lookup by tag cannot reach Slurm during the launch
    a.runner.cutAfter = "sbatch";
    a.runner.blocked.add("squeue").add("sacct");
    const id = await submit(a, ["sh", "-c", "sleep 2; echo adopted-later"]);
    a.runner.blocked.clear();
    expect(bidOf(a, id).slurm_job_id).toBeUndefined();
    expect(bidOf(a, id).submit_unconfirmed).toContain("lost");

    const adopted = await until(
      "the observation to adopt the job by its tag",
      async () => {
        await a.service.refresh(id);
        const bid = bidOf(a, id);
        return bid.slurm_job_id !== undefined ? bid : undefined;
      },
      15_000,
    );
    slurmIds.push(adopted.slurm_job_id!);
    expect(adopted.adopted).toBe(true);
    expect(adopted.remote_dir).toBeDefined(); // merged into the launch's backend_id, not replacing it

    const b = makeRig({ root: a.root });
    rigs.push(b);
    const w = await b.service.wait(id, { timeoutMs: 30_000 });
    expect(w.job_state).toBe("succeeded");
    expect(w.stdout_tail).toContain("adopted-later");
    const byName = b.runner.calls.filter(
      (c) => c.program === "squeue" && c.argv.some((x) => x.startsWith("--name")),
    );
    expect(byName).toEqual([]);
    expect(a.runner.count("sbatch") + b.runner.count("sbatch")).toBe(1);
  }, 60_000);

  test("the accounting grace started by one process is not restarted by the next", async () => {
    const graceS = 3;
    const a = makeRig({ host: { slurm_accounting_grace: graceS } });
    rigs.push(a);
    const id = await submit(a, ["sleep", "300"]);
    slurmIds.push(bidOf(a, id).slurm_job_id!);
    await until(
      "the job running",
      async () => ((await a.service.refresh(id)).state === "running" ? true : undefined),
      20_000,
    );
    // make Slurm forget the job: an ID neither squeue nor sacct knows
    a.store.setBackendId(id, { ...bidOf(a, id), slurm_job_id: "60000000" });
    const first = await a.service.refresh(id);
    expect(first.state).toBe("running");
    expect(first.status_message).toContain("waiting for accounting");
    const since = bidOf(a, id).unsettled_since;
    expect(since).toBeDefined();
    const sinceMs = Date.parse(since!);
    expect(Math.abs(Date.now() - sinceMs)).toBeLessThan(5_000);

    // the first process goes away; the grace runs out while no one watches
    await until(
      "the grace to run out",
      async () => (Date.now() > sinceMs + graceS * 1000 ? true : undefined),
      10_000,
    );
    const b = makeRig({ root: a.root, host: { slurm_accounting_grace: graceS } });
    rigs.push(b);
    // a process that restarted the grace would keep the job running here for another 3 s
    const lost = await b.service.refresh(id);
    expect(lost.state).toBe("lost");
    expect(b.service.getJob(id).reason).toBe("slurm_job_vanished");
  }, 60_000);
});
