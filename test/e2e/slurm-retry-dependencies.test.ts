// `--after` on a Slurm parent that has retries, on the real test cluster through the binary: the child's native
// afterok names the parent's current attempt's Slurm job and moves to each new attempt (scontrol update), so an
// earlier attempt's failure (DependencyNeverSatisfied) never ends the child; a :failed/:any child is submitted held
// (sbatch --hold) and released or ended dependency_failed by the client that sees the parent's final end, or by a
// later reader when that client was killed.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm retry-dependency e2e");

describe.skipIf(!up)("Slurm: a dependency on a retried parent", () => {
  const sb = up ? new Sandbox() : null;
  const submitted: string[] = [];
  afterAll(async () => {
    if (submitted.length > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });
  const flags = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];
  const track = (id: string) => {
    for (const a of sb!.run(["inspect", "--json", id]).json.attempt_history ?? [])
      if (a.backend_id?.slurm_job_id !== undefined) submitted.push(String(a.backend_id.slurm_job_id));
    const sid = sb!.status(id).backend_id?.slurm_job_id;
    if (sid !== undefined) submitted.push(String(sid));
  };
  /** A job's Slurm ID once recorded (an unconfirmed sbatch reply leaves it unset until a status adopts the job). */
  const slurmIdOf = (id: string) => slurmJobIdOf(() => sb!.status(id));

  test("a parent failing twice, then succeeding: the :ok child runs once, after the success", async () => {
    const s = sb!;
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const count = join(s.work, "count");
    const p = s.submit(
      [
        "sh",
        "-c",
        `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > '${count}'; sleep 3; [ "$n" -ge 3 ]`,
      ],
      [...flags, "--retries", "2", "--retry-on", "exit", "--retry-backoff", "0"],
    );
    const child = s.submit(["sh", "-c", `echo "saw $(cat '${count}')"`], [...flags, "--after", p]);
    const first = await slurmIdOf(p);
    const shown = (await run(["scontrol", "show", "job", await slurmIdOf(child)])).stdout;
    expect(shown).toContain(`afterok:${first}`);
    const w = await s.runAsync(["wait", "--json", "--timeout", "240s", child]);
    track(p);
    track(child);
    expect([w.json.job_state, w.json.stdout_tail]).toEqual(["succeeded", "saw 3\n"]);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "60s", p])).json;
    expect([parent.state, parent.attempt, parent.attempts]).toEqual(["succeeded", 3, 3]);
    const ins = s.run(["inspect", "--json", p]).json;
    expect(ins.attempt_history.map((a: { state: string }) => a.state)).toEqual(["failed", "failed"]);
  }, 300_000);

  /** A parent that counts its attempts in `count`, each `seconds` long, failing until attempt `okAt` (never when 0). */
  const counting = (count: string, okAt: number, retries: number, seconds = 3) =>
    sb!.submit(
      [
        "sh",
        "-c",
        `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > '${count}'; sleep ${seconds}; [ ${okAt} -ne 0 ] && [ "$n" -ge ${okAt} ]`,
      ],
      [...flags, "--retries", String(retries), "--retry-on", "exit", "--retry-backoff", "0"],
    );
  const saw = (count: string, on: string) =>
    sb!.submit(["sh", "-c", `echo "saw $(cat '${count}')"`], [...flags, "--after", on]);
  const slurmShow = async (id: string) =>
    (await run(["scontrol", "show", "job", await slurmIdOf(id)])).stdout;
  const wait = async (id: string) => (await sb!.runAsync(["wait", "--json", "--timeout", "240s", id])).json;
  const gone = (sid: string) => async () => (await run(["squeue", "-h", "-j", sid])).stdout.trim() === "";

  test("a parent failing every attempt: the held :failed child runs once after the last, the :ok child is dependency_failed", async () => {
    const s = sb!;
    const count = join(s.work, "count-a");
    // attempts of 10 s: the child is looked at in Slurm while the parent is still on them (held), also on a loaded
    // host where its Slurm ID takes seconds to be recorded
    const p = counting(count, 0, 1, 10);
    const failed = saw(count, `${p}:failed`);
    const ok = saw(count, `${p}:ok`);
    // held by us, not by a native afternotok (which would start it after attempt 1)
    const shown = await slurmShow(failed);
    expect(shown).toContain("Reason=JobHeldUser");
    expect(shown).not.toContain("afternotok");
    expect(s.status(failed).status_message).toContain(
      "held for a parent with retries until its last attempt ends",
    );
    const f = await wait(failed);
    track(p);
    track(failed);
    track(ok);
    expect([f.job_state, f.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "60s", p])).json;
    expect([parent.state, parent.attempt, parent.attempts]).toEqual(["failed", 2, 2]);
    expect(Date.parse(f.started_at)).toBeGreaterThanOrEqual(Date.parse(parent.finished_at) - 1000);
    const o = await wait(ok);
    expect([o.job_state, o.reason, o.started_at, o.stdout_tail]).toEqual([
      "cancelled",
      "dependency_failed",
      null,
      "",
    ]);
  }, 300_000);

  test("a parent succeeding on attempt 2: the held :any child runs after it, the held :failed child never runs", async () => {
    const s = sb!;
    const count = join(s.work, "count-b");
    // attempts of 10 s (see above): with 3 s a loaded CI saw the parent succeed, and the child released, before it looked
    const p = counting(count, 2, 2, 10);
    const any = saw(count, `${p}:any`);
    const failed = saw(count, `${p}:failed`);
    expect(await slurmShow(any)).toContain("Reason=JobHeldUser");
    const a = await wait(any);
    track(p);
    track(any);
    track(failed);
    expect([a.job_state, a.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
    const f = await wait(failed);
    expect([f.job_state, f.reason, f.started_at, f.stdout_tail]).toEqual([
      "cancelled",
      "dependency_failed",
      null,
      "",
    ]);
    expect(f.error.detail).toBe(`after ${p}:failed`);
    // scancelled, not left pending in the cluster
    await until("the never-run child out of squeue", gone(await slurmIdOf(failed)), 30_000, 500);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "60s", p])).json;
    expect([parent.state, parent.attempt]).toEqual(["succeeded", 2]);
  }, 300_000);

  test("the client killed while the child is held: a new reader makes the parent's next attempt and releases the child", async () => {
    const s = sb!;
    const count = join(s.work, "count-c");
    // attempt 1 runs 10 s, and its own mark says it started: a status may not have seen it running yet (a Slurm
    // round is 15 s; a 3 s attempt could end unseen), so the test goes by the mark
    const p = counting(count, 2, 1, 10);
    const any = saw(count, `${p}:any`);
    const waiter = s.spawn(["wait", "--timeout", "240s", any]);
    await until("attempt 1 started", () => existsSync(count), 90_000, 250);
    const first = await slurmIdOf(p);
    const childSid = await slurmIdOf(any);
    const heldNow = async () => (await run(["scontrol", "show", "job", childSid])).stdout;
    expect(await heldNow()).toContain("Reason=JobHeldUser");
    killQuietly(waiter.pid);
    await waiter.exited;
    // attempt 1 ends in Slurm with no client running: nothing makes attempt 2, the child stays held
    await until("attempt 1 out of squeue", gone(first), 60_000, 500);
    expect(await heldNow()).toContain("Reason=JobHeldUser");
    const a = await wait(any);
    track(p);
    track(any);
    expect([a.job_state, a.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "60s", p])).json;
    expect([parent.state, parent.attempt, parent.attempts]).toEqual(["succeeded", 2, 2]);
  }, 300_000);

  test("only the parent waited on: the client recording its end releases the held child, which runs in Slurm", async () => {
    const s = sb!;
    const count = join(s.work, "count-d");
    const p = counting(count, 2, 1);
    const any = saw(count, `${p}:any`);
    const childSid = await slurmIdOf(any);
    const parent = (await s.runAsync(["wait", "--json", "--timeout", "240s", p])).json;
    submitted.push(childSid);
    expect([parent.state, parent.attempt]).toEqual(["succeeded", 2]);
    // no reader of the child since (not even a status): Slurm runs it to its end on its own
    await until(
      "the released child completed in Slurm",
      async () =>
        (await run(["sacct", "-n", "-X", "-P", "-j", childSid, "-o", "State"])).stdout.trim() === "COMPLETED",
      60_000,
      500,
    );
    track(p);
    const a = await wait(any);
    expect([a.job_state, a.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
  }, 300_000);

  test("a held child cancelled while its parent runs: cancelled, never ran, off the queue; the parent unaffected", async () => {
    const s = sb!;
    const p = s.submit(["sleep", "30"], [...flags, "--retries", "1", "--retry-on", "exit"]);
    const child = s.submit(["sh", "-c", "echo never"], [...flags, "--after", `${p}:failed`]);
    const childSid = await slurmIdOf(child);
    track(p);
    track(child);
    expect((await run(["scontrol", "show", "job", childSid])).stdout).toContain("Reason=JobHeldUser");
    expect((await s.runAsync(["cancel", "--json", child])).code).toBe(0);
    const c = await wait(child);
    expect([c.job_state, c.started_at, c.stdout_tail]).toEqual(["cancelled", null, ""]);
    await until("the cancelled child out of squeue", gone(childSid), 30_000, 500);
    expect(["queued", "starting", "running"]).toContain(s.status(p).state);
    expect(s.run(["cancel", "--grace-period", "0", p]).code).toBe(0);
  }, 120_000);
});
