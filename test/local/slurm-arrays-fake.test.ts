// Job arrays on Slurm through the binary with the fake scheduler commands (test/fake-slurm/) at a small
// MaxArraySize: the split into one sbatch per chunk, SLURM_ARRAY_TASK_ID per chunk, %N held across chunks (sampled
// continuously), and the unthrottled split running its chunks side by side.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Target } from "../contract/contract.ts";
import { slurmFakeTarget } from "../contract/targets.ts";
import { until } from "../helpers/cli.ts";

let t: Target;
let state: string;
beforeAll(async () => {
  t = await slurmFakeTarget();
  state = t.sb.env.AWL_FAKE_SLURM!;
  writeFileSync(join(state, "max_array_size"), "4\n");
});
afterAll(async () => {
  await t?.close();
});

const sbatchCalls = () =>
  existsSync(join(state, "sbatch_calls"))
    ? readFileSync(join(state, "sbatch_calls"), "utf8").trim().split("\n").filter(Boolean).length
    : 0;
/** Array tasks the fake scheduler has RUNNING now. */
const runningTasks = () =>
  readdirSync(join(state, "jobs")).filter((d) => {
    const p = join(state, "jobs", d, "state");
    return d.includes("_") && existsSync(p) && readFileSync(p, "utf8").trim() === "RUNNING";
  }).length;

describe("Slurm arrays split at MaxArraySize (fake scheduler)", () => {
  test("0-9%2 at MaxArraySize 4: three sbatch calls, task IDs per chunk, never more than 2 running", async () => {
    const before = sbatchCalls();
    const sub = t.sb.run([
      "submit",
      "--json",
      ...t.flags,
      "--array",
      "0-9%2",
      "--",
      "sh",
      "-c",
      'echo "index=$AWAITLESS_ARRAY_INDEX slurm=$SLURM_ARRAY_TASK_ID"; sleep 0.3',
    ]);
    expect(sub.code).toBe(0);
    const id = String(sub.json.job_id);
    expect(sbatchCalls() - before).toBe(3);
    let maxOurs = 0;
    let maxFake = 0;
    await until(
      "every task ended",
      () => {
        const st = t.sb.run(["status", "--json", id]).json;
        maxOurs = Math.max(maxOurs, Number(st.counts?.running ?? 0));
        maxFake = Math.max(maxFake, runningTasks());
        return st.state === "succeeded" || st.state === "failed";
      },
      90_000,
      100,
    );
    expect(maxFake).toBeLessThanOrEqual(2);
    // our view lags the scheduler by a round: a task whose command ended reads running until the round that
    // confirms it, while the scheduler may have started the next (docs/arrays.md): at most one more than %N
    expect(maxOurs).toBeLessThanOrEqual(3);
    expect(maxFake).toBeGreaterThanOrEqual(1);
    const w = t.sb.run(["wait", "--json", id]);
    expect(w.json.job_state).toBe("succeeded");
    expect(w.json.counts).toEqual({ succeeded: 10 });
    const tasks = t.sb.run(["inspect", "--json", id]).json.task_list as { index: number; job_id: string }[];
    const chunkOf = (i: number) => Math.floor(i / 4);
    const slurm = new Map<number, string>();
    const times = new Map<number, { start: number; end: number }>();
    for (const task of tasks) {
      const r = t.sb.run(["wait", "--json", `${id}.${task.index}`]).json;
      expect(r.stdout_tail).toContain(`index=${task.index} slurm=${task.index % 4}`);
      slurm.set(task.index, String(t.sb.status(task.job_id).backend_id.slurm_job_id));
      times.set(task.index, {
        start: Date.parse(String(r.started_at)),
        end: Date.parse(String(r.finished_at)),
      });
    }
    // one Slurm array job per chunk, task IDs from 0 in each
    const jobsOf = (k: number) =>
      new Set([...slurm].filter(([i]) => chunkOf(i) === k).map(([, s]) => s.split("_")[0]));
    expect([0, 1, 2].map((k) => jobsOf(k).size)).toEqual([1, 1, 1]);
    expect(new Set([0, 1, 2].map((k) => [...jobsOf(k)][0])).size).toBe(3);
    expect(slurm.get(9)).toMatch(/_1$/);
    // chunk k starts once chunk k-1 ended (afterany): %N holds for the whole array
    for (const k of [1, 2]) {
      const prevEnd = Math.max(...[...times].filter(([i]) => chunkOf(i) === k - 1).map(([, x]) => x.end));
      const start = Math.min(...[...times].filter(([i]) => chunkOf(i) === k).map(([, x]) => x.start));
      // a task's start is recorded in whole seconds (its end to the centisecond): compare at the start's precision
      expect(start).toBeGreaterThanOrEqual(Math.floor(prevEnd / 1000) * 1000);
    }
  }, 120_000);

  test("without %N the chunks are submitted without a dependency and every task succeeds", async () => {
    const before = sbatchCalls();
    const sub = t.sb.run(["submit", "--json", ...t.flags, "--array", "0-5", "--", "true"]);
    expect(sub.code).toBe(0);
    expect(sbatchCalls() - before).toBe(2);
    const jobs = readFileSync(join(state, "sbatch_calls"), "utf8").trim().split("\n").slice(-2);
    for (const j of jobs) expect(readFileSync(join(state, "jobs", j, "dependency"), "utf8").trim()).toBe("");
    const w = t.sb.run(["wait", "--json", "--timeout", "60s", String(sub.json.job_id)]);
    expect(w.json.job_state).toBe("succeeded");
    expect(w.json.counts).toEqual({ succeeded: 6 });
  }, 90_000);
});
