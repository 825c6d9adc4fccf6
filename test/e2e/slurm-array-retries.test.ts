// --retries with --array on the real Slurm cluster through the binary: a task whose attempt 1 (a task of the
// array's one sbatch --array) fails is retried as a single sbatch job in its own attempts/2 directory, with the same
// AWAITLESS_ARRAY_INDEX and SLURM_ARRAY_TASK_ID; the array's link for that task still names attempt 1's directory.
// An array cannot be held for a :failed/:any parent with retries: refused before anything is created.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { isTerminal, type JobState } from "../../src/core/model/job.ts";
import { Sandbox, until } from "../helpers/cli.ts";
import { run, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm array retries e2e");

describe.skipIf(!up)("Slurm: --retries with --array", () => {
  const sb = up ? new Sandbox() : null;
  const submitted = new Set<string>();
  afterAll(async () => {
    if (submitted.size > 0) await run(["scancel", ...submitted]);
    sb?.cleanup();
  });

  test("one index failing once: attempt 2 is a single Slurm job in attempts/2, and the array succeeds", async () => {
    const s = sb!;
    const cluster = join(s.root, "cluster");
    s.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${cluster}"\nslurm_accounting_grace = 20\n`,
    );
    const mark = join(s.work, "failed-once");
    const sub = s.run([
      "submit",
      "--json",
      ...["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"],
      ...["--array", "0-2%2", "--retries", "1", "--retry-on", "exit", "--retry-backoff", "0"],
      "--",
      "sh",
      "-c",
      `echo "i=$AWAITLESS_ARRAY_INDEX t=\${SLURM_ARRAY_TASK_ID-none}"; if [ "$AWAITLESS_ARRAY_INDEX" = 1 ] && [ ! -e '${mark}' ]; then touch '${mark}'; exit 3; fi`,
    ]);
    expect(sub.code).toBe(0);
    const id = sub.json.job_id as string;
    const w = await s.runAsync(["wait", "--json", "--timeout", "240s", id]);
    const tasks = s.run(["inspect", "--json", id]).json.task_list as { index: number; job_id: string }[];
    for (const t of tasks) {
      submitted.add(String(s.status(t.job_id).backend_id?.slurm_job_id ?? ""));
    }
    submitted.delete("");
    expect([w.code, w.json.job_state, w.json.counts, w.json.failed_indices]).toEqual([
      0,
      "succeeded",
      { succeeded: 3 },
      [],
    ]);
    const t1 = (await s.runAsync(["wait", "--json", `${id}.1`])).json;
    expect([t1.job_state, t1.attempt, t1.attempts, t1.stdout_tail]).toEqual(["succeeded", 2, 2, "i=1 t=1\n"]);
    const t0 = (await s.runAsync(["wait", "--json", `${id}.0`])).json;
    expect([t0.job_state, t0.attempt, t0.stdout_tail]).toEqual(["succeeded", 1, "i=0 t=0\n"]);
    // attempt 1 was a task of the array's sbatch, attempt 2 a single job of its own, in attempts/2
    const task1 = tasks.find((t) => t.index === 1)!.job_id;
    const history = s.run(["inspect", "--json", task1]).json.attempt_history;
    expect(history.map((a: { state: string; exit_code: number }) => [a.state, a.exit_code])).toEqual([
      ["failed", 3],
    ]);
    const arrayJob = /^(\d+)_0$/.exec(
      String(s.status(tasks.find((t) => t.index === 0)!.job_id).backend_id.slurm_job_id),
    )![1]!;
    submitted.add(arrayJob);
    const sacct = await run(["sacct", "-n", "-X", "-P", "-j", `${arrayJob}_1`, "-o", "JobID,State"]);
    expect(sacct.stdout.trim()).toBe(`${arrayJob}_1|FAILED`);
    const now = s.status(task1).backend_id;
    expect(String(now.slurm_job_id)).toMatch(/^\d+$/);
    expect(String(now.slurm_job_id)).not.toBe(arrayJob);
    expect(now.remote_dir).toBe(join(cluster, "jobs", task1, "attempts", "2"));
    const chunks = readdirSync(join(cluster, "arrays", id));
    expect(chunks).toEqual(["0"]);
    expect(readlinkSync(join(cluster, "arrays", id, "0", "1"))).toBe(join(cluster, "jobs", task1));
  }, 300_000);

  test("an array --after PARENT:failed on a parent with retries is refused before anything is created", async () => {
    const s = sb!;
    const flags = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];
    const p = s.submit(["sleep", "60"], [...flags, "--retries", "1", "--retry-on", "exit"]);
    submitted.add(String(s.status(p).backend_id?.slurm_job_id ?? ""));
    submitted.delete("");
    const before = s.jobCount();
    const r = s.run(["submit", ...flags, "--array", "0-1", "--after", `${p}:failed`, "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("an array cannot wait for its last attempt with :failed");
    expect(r.stderr).toContain(`--after ${p}`);
    expect(s.jobCount()).toBe(before);
    // the parent is stopped: cancel answers 0 when it saw the end, 4 when the end is still on its way (a loaded
    // cluster confirms it later); either way the parent ends
    expect([0, 4]).toContain(s.run(["cancel", "--grace-period", "0", p]).code);
    await until("the parent ended", () => isTerminal(s.status(p).state as JobState), 60_000, 250);
  }, 120_000);
});
