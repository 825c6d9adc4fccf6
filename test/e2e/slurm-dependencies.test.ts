// Job dependencies on real Slurm through the compiled binary: a parent still in the queue becomes one native
// sbatch --dependency (afterok/afterany/afternotok on its Slurm ID); a parent that already ended is resolved by us
// (TheoChem-VU/TCMU#362: afterok on an ended parent fails in Slurm), so an impossible condition is never submitted;
// DependencyNeverSatisfied ends the child cancelled/dependency_failed and scancels it; a held child can be
// cancelled; chains that run (the batch script's status makes afterok mean succeeded).
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm dependency e2e");

describe.skipIf(!up)("Slurm dependencies through the binary", () => {
  const sb = up ? new Sandbox() : null;
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });
  const s = () => {
    sb!.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(sb!.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    return sb!;
  };
  const flags = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];
  /** A job's Slurm ID once recorded (an unconfirmed sbatch reply leaves it unset until a status adopts the job). */
  const slurmIdOf = async (id: string) => {
    const sid = await slurmJobIdOf(() => sb!.status(id));
    submitted.push(sid);
    return sid;
  };
  /** For the cleanup: a job's Slurm ID if it has one now (a child whose parent already failed never gets one). */
  const track = (id: string) => {
    const sid = sb!.status(id).backend_id?.slurm_job_id;
    if (sid !== undefined) submitted.push(String(sid));
  };
  const showJob = async (sid: string) => (await run(["scontrol", "show", "job", sid])).stdout;
  /** A parent that stays active until the test cancels it: held when Slurm has not started it yet, else running a
   * bounded sleep (an idle cluster may start it before `scontrol hold` reaches it). */
  const heldParent = async () => {
    const id = s().submit(["sh", "-c", "sleep 90"], flags);
    const sid = await slurmIdOf(id);
    const hold = await run(["scontrol", "hold", sid]);
    if (hold.code !== 0) expect(await showJob(sid)).toMatch(/JobState=(RUNNING|CONFIGURING)/);
    return { id, sid };
  };

  test("active parent: native --dependency per condition; the held child is queued, cancel ends it", async () => {
    const p = await heldParent();
    const ok = s().submit(["true"], [...flags, "--after", p.id]);
    const any = s().submit(["true"], [...flags, "--after", `${p.id}:any`]);
    const failed = s().submit(["true"], [...flags, "--after", `${p.id}:failed`]);
    expect(await showJob(await slurmIdOf(ok))).toContain(`Dependency=afterok:${p.sid}`);
    expect(await showJob(await slurmIdOf(any))).toContain(`Dependency=afterany:${p.sid}`);
    expect(await showJob(await slurmIdOf(failed))).toContain(`Dependency=afternotok:${p.sid}`);
    expect(s().status(ok).state).toBe("queued");
    const c = await s().runAsync(["cancel", "--json", any]);
    expect(c.code).toBe(0);
    const w = await s().runAsync(["wait", "--json", "--timeout", "60s", any]);
    expect([w.json.job_state, w.json.reason]).toEqual(["cancelled", "cancelled"]);
    for (const id of [ok, failed, p.id]) await s().runAsync(["cancel", "--grace-period", "0", id]);
  }, 120_000);

  test("a parent cancelled while the child waits: Slurm's DependencyNeverSatisfied → dependency_failed, scancelled", async () => {
    const p = await heldParent();
    const child = s().submit(["sh", "-c", "echo never"], [...flags, "--after", `${p.id}:ok`]);
    const sid = await slurmIdOf(child);
    expect((await s().runAsync(["cancel", p.id])).code).toBe(0);
    const w = await s().runAsync(["wait", "--json", "--timeout", "90s", child]);
    expect([w.json.job_state, w.json.reason, w.json.exit_code]).toEqual([
      "cancelled",
      "dependency_failed",
      null,
    ]);
    expect(w.json.error.detail).toBe(`after ${p.id}:ok`);
    // taken off Slurm's queue, never started
    await until("Slurm to drop the child", async () => !/JobState=PENDING/.test(await showJob(sid)), 30_000);
    expect(w.json.started_at).toBeNull();
  }, 150_000);

  test("chains that run: afterok after a success; after exit 3, afterok → dependency_failed and afternotok runs", async () => {
    const ok = s().submit(["sh", "-c", "exit 0"], flags);
    track(ok);
    const next = s().submit(["sh", "-c", "echo next ran"], [...flags, "--after", ok]);
    track(next);
    const bad = s().submit(["sh", "-c", "exit 3"], flags);
    track(bad);
    const never = s().submit(["sh", "-c", "echo never"], [...flags, "--after", bad]);
    track(never);
    const rescue = s().submit(["sh", "-c", "echo rescue ran"], [...flags, "--after", `${bad}:failed`]);
    track(rescue);
    const wait = async (id: string) => (await s().runAsync(["wait", "--json", "--timeout", "120s", id])).json;
    const a = await wait(next);
    expect([a.job_state, a.stdout_tail]).toEqual(["succeeded", "next ran\n"]);
    const b = await wait(never);
    expect([b.job_state, b.reason, b.stdout_tail]).toEqual(["cancelled", "dependency_failed", ""]);
    const c = await wait(rescue);
    expect([c.job_state, c.stdout_tail]).toEqual(["succeeded", "rescue ran\n"]);
    expect((await wait(bad)).exit_code).toBe(3);
  }, 200_000);

  test("a parent that already ended is resolved by us: ok → dependency_failed with no sbatch; any → no --dependency", async () => {
    const p = await heldParent();
    expect((await s().runAsync(["cancel", p.id])).code).toBe(0);
    await s().runAsync(["wait", "--json", "--timeout", "60s", p.id]);
    const never = await s().runAsync(["submit", "--json", ...flags, "--after", p.id, "--", "true"]);
    expect(never.code).toBe(0);
    expect([never.json.state, never.json.job.status_message ?? null]).toEqual(["cancelled", null]);
    const st = s().status(never.json.job_id);
    expect([st.state, st.reason]).toEqual(["cancelled", "dependency_failed"]);
    expect(st.backend_id?.slurm_job_id).toBeUndefined();
    const any = s().submit(["true"], [...flags, "--after", `${p.id}:any`]);
    const sid = await slurmIdOf(any);
    expect(await showJob(sid)).toMatch(/Dependency=\(null\)/);
    await s().runAsync(["cancel", "--grace-period", "0", any]);
  }, 120_000);
});
