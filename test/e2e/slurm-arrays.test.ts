// Job arrays on the real Slurm cluster through the binary: one sbatch --array, per-task results and failed indices,
// Slurm's %N sampled continuously, SLURM_ARRAY_TASK_ID, cancel of one task and of the array, a split past
// MaxArraySize, idempotent replay and a submit killed before and after its sbatch.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { run, slurmJobIdOf, slurmUp } from "./slurm-harness.ts";

const up = await slurmUp("Slurm arrays e2e");

interface Task {
  index: number;
  job_id: string;
  state: string;
}

describe.skipIf(!up)("job arrays on Slurm through the binary", () => {
  const sb = up ? new Sandbox() : null;
  const arrayJobs = new Set<string>();
  afterAll(async () => {
    if (arrayJobs.size > 0) await run(["scancel", ...arrayJobs]);
    sb?.cleanup();
  });
  const s = () => sb!;
  const configure = () =>
    s().writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\nslurm_poll_interval_seconds = 0.5\nslurm_min_poll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(s().root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
  const target = ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"];
  const tasks = (id: string): Task[] => s().run(["inspect", "--json", id]).json.task_list as Task[];
  /** A job's Slurm ID once recorded (an unconfirmed sbatch reply leaves it unset until a status adopts the job). */
  const slurmIdOf = (jobId: string): Promise<string> => slurmJobIdOf(() => s().status(jobId));
  /** The Slurm array job IDs of an array's tasks (each task's ID is ARRAYJOB_TASK). */
  const arrayJobsOf = async (id: string): Promise<Set<string>> => {
    const out = new Set<string>();
    for (const t of tasks(id)) {
      const sid = await slurmIdOf(t.job_id);
      expect(sid).toMatch(/^\d+_\d+$/);
      out.add(sid.split("_")[0]!);
    }
    for (const j of out) arrayJobs.add(j);
    return out;
  };
  const runningInSqueue = async (arrayJob: string): Promise<number> => {
    const q = await run([
      "squeue",
      "--noheader",
      "--array",
      `--jobs=${arrayJob},${arrayJob}`,
      "--format=%i|%T",
    ]);
    return q.stdout.split("\n").filter((l) => l.endsWith("|RUNNING")).length;
  };

  test("one sbatch: per-task results, failed indices, SLURM_ARRAY_TASK_ID, %N never exceeded", async () => {
    configure();
    const spans = join(s().work, "spans");
    const sub = s().run([
      "submit",
      "--json",
      ...target,
      "--array",
      "0-5%2",
      "--",
      "sh",
      "-c",
      // each command notes its start and end (ns) in one file: how many overlapped is then exact
      `echo "+ $(date +%s%N)" >> ${spans}; echo "index=$AWAITLESS_ARRAY_INDEX slurm=$SLURM_ARRAY_TASK_ID array=$AWAITLESS_ARRAY_ID"; sleep 3; echo "- $(date +%s%N)" >> ${spans}; [ "$AWAITLESS_ARRAY_INDEX" != 3 ] && [ "$AWAITLESS_ARRAY_INDEX" != 5 ]`,
    ]);
    expect(sub.code).toBe(0);
    const id = String(sub.json.job_id);
    expect(sub.json.tasks).toBe(6);
    const jobs = await arrayJobsOf(id);
    // one sbatch for the array: every task is a task of one Slurm array job
    expect(jobs.size).toBe(1);
    const [arrayJob] = [...jobs];
    // sampled continuously until every task ended: never more than %N running, by our status and by squeue (each
    // task runs 3 s, three pairs in a row: room for several samples even where a status takes a second or two)
    let maxOurs = 0;
    let maxSlurm = 0;
    let samples = 0;
    await until(
      "every task ended",
      async () => {
        const st = s().run(["status", "--json", id]).json;
        maxOurs = Math.max(maxOurs, Number(st.counts?.running ?? 0));
        maxSlurm = Math.max(maxSlurm, await runningInSqueue(arrayJob!));
        samples++;
        return ["succeeded", "failed", "cancelled"].includes(String(st.state));
      },
      180_000,
      100,
    );
    expect(samples).toBeGreaterThan(3);
    // Slurm never ran more than %N at once, and the commands themselves never overlapped more than that
    expect(maxSlurm).toBeLessThanOrEqual(2);
    expect(Math.max(maxOurs, maxSlurm)).toBeGreaterThanOrEqual(1);
    const events = (await Bun.file(spans).text())
      .trim()
      .split("\n")
      .map((l) => ({ d: l.startsWith("+") ? 1 : -1, at: BigInt(l.slice(2)) }))
      .sort((a, b) => (a.at === b.at ? a.d - b.d : a.at < b.at ? -1 : 1));
    expect(events.length).toBe(12);
    let now = 0;
    let most = 0;
    for (const e of events) {
      now += e.d;
      most = Math.max(most, now);
    }
    expect(most).toBeLessThanOrEqual(2);
    expect(most).toBeGreaterThanOrEqual(1);
    const w = s().run(["wait", "--json", id]);
    expect(w.code).toBe(3);
    expect(w.json.job_state).toBe("failed");
    expect(w.json.counts).toEqual({ succeeded: 4, failed: 2 });
    expect(w.json.failed_indices).toEqual([3, 5]);
    for (const t of tasks(id)) {
      const r = s().run(["wait", "--json", `${id}.${t.index}`]).json;
      expect(r.stdout_tail).toContain(`index=${t.index} slurm=${t.index} array=${id}`);
      expect(r.exit_code).toBe(t.index === 3 || t.index === 5 ? 1 : 0);
    }
  }, 240_000);

  test("cancel ARRAY_ID.INDEX cancels that task alone; cancel ARRAY_ID the rest", async () => {
    configure();
    const sub = s().run(["submit", "--json", ...target, "--array", "0-4%1", "--", "sleep", "300"]);
    const id = String(sub.json.job_id);
    const [arrayJob] = [...(await arrayJobsOf(id))];
    await until("task 0 running", () => tasks(id).find((t) => t.index === 0)?.state === "running", 60_000);
    // a pending task: Slurm drops it and keeps no line of its own; it ends cancelled, never run
    const one = s().run(["cancel", "--json", `${id}.3`]);
    expect(one.code).toBe(0);
    expect(one.json.job_state).toBe("cancelled");
    const q = await run(["squeue", "--noheader", "--array", `--jobs=${arrayJob},${arrayJob}`, "--format=%i"]);
    expect(q.stdout).not.toContain(`${arrayJob}_3`);
    expect(q.stdout).toContain(`${arrayJob}_4`);
    expect(
      tasks(id)
        .filter((t) => t.state === "cancelled")
        .map((t) => t.index),
    ).toEqual([3]);
    const all = s().run(["cancel", "--json", "--grace-period", "2s", id]);
    expect(all.json.job_state).toBe("cancelled");
    expect(all.json.cancel_requested).toBe(4);
    expect(all.json.already_terminal).toBe(1);
    expect(all.json.array.cancelled_indices).toEqual([0, 1, 2, 3, 4]);
    await until(
      "Slurm has no task of the array left",
      async () =>
        (
          await run(["squeue", "--noheader", "--array", `--jobs=${arrayJob},${arrayJob}`, "--format=%i"])
        ).stdout.trim() === "",
      30_000,
    );
  }, 180_000);

  test("indices past MaxArraySize: one sbatch per chunk, %N kept across chunks", async () => {
    configure();
    const max = Number(
      /MaxArraySize\s*=\s*(\d+)/.exec((await run(["scontrol", "show", "config"])).stdout)?.[1] ?? "1001",
    );
    const high = max + 10;
    const sub = s().run([
      "submit",
      "--json",
      ...target,
      "--array",
      `0-1,${high}-${high + 1}%2`,
      "--",
      "sh",
      "-c",
      'echo "index=$AWAITLESS_ARRAY_INDEX slurm=$SLURM_ARRAY_TASK_ID"',
    ]);
    expect(sub.code).toBe(0);
    const id = String(sub.json.job_id);
    expect((await arrayJobsOf(id)).size).toBe(2);
    const w = s().run(["wait", "--json", "--timeout", "150s", id]);
    expect(w.json.job_state).toBe("succeeded");
    const results = tasks(id).map((t) => ({ t, r: s().run(["wait", "--json", `${id}.${t.index}`]).json }));
    // the second chunk's Slurm task IDs start at 0; the command still sees its own index
    for (const { t, r } of results) {
      const slurm = t.index >= high ? t.index - high : t.index;
      expect(r.stdout_tail).toContain(`index=${t.index} slurm=${slurm}`);
    }
    // the second chunk starts only once the first ended (afterany): never more than %N of the array at once
    const firstEnd = Math.max(
      ...results.filter(({ t }) => t.index < high).map(({ r }) => Date.parse(String(r.finished_at))),
    );
    const secondStart = Math.min(
      ...results.filter(({ t }) => t.index >= high).map(({ r }) => Date.parse(String(r.started_at))),
    );
    // a task's start is recorded in whole seconds (its end to the centisecond): compare at the start's precision
    expect(secondStart).toBeGreaterThanOrEqual(Math.floor(firstEnd / 1000) * 1000);
  }, 240_000);

  test("--after: the array's one sbatch waits for its parent natively; a parent that fails cancels every task", async () => {
    configure();
    const marker = join(s().work, "parent-go");
    const parent = s().submit(
      ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.2; done; exit "$(cat ${marker})"`],
      target,
    );
    arrayJobs.add(await slurmIdOf(parent));
    const ok = s().run(["submit", "--json", ...target, "--after", parent, "--array", "0-2", "--", "true"]);
    expect(ok.code).toBe(0);
    const okId = String(ok.json.job_id);
    const failed = s().run([
      "submit",
      "--json",
      ...target,
      "--after",
      `${parent}:failed`,
      "--array",
      "0-1",
      "--",
      "true",
    ]);
    const failedId = String(failed.json.job_id);
    const [okJob] = [...(await arrayJobsOf(okId))];
    await arrayJobsOf(failedId);
    const dep = await run(["scontrol", "--oneliner", "show", "job", `${okJob}_0`]);
    expect(dep.stdout).toMatch(/Dependency=afterok:\d+/);
    await until("the parent running", () => s().status(parent).state === "running", 60_000);
    expect(tasks(okId).every((t) => t.state === "queued")).toBe(true);
    await Bun.write(marker, "0");
    const w = s().run(["wait", "--json", "--timeout", "120s", okId]);
    expect(w.json.job_state).toBe("succeeded");
    expect(w.json.counts).toEqual({ succeeded: 3 });
    const parentEnd = Date.parse(String(s().run(["wait", "--json", parent]).json.finished_at));
    for (const t of tasks(okId)) {
      const r = s().run(["wait", "--json", t.job_id]).json;
      expect(Date.parse(String(r.started_at))).toBeGreaterThanOrEqual(parentEnd - 1000);
    }
    // the parent succeeded: a task waiting for it to fail can never run
    const f = s().run(["wait", "--json", "--timeout", "120s", failedId]);
    expect(f.json.job_state).toBe("cancelled");
    expect(f.json.cancelled_indices).toEqual([0, 1]);
    for (const t of tasks(failedId)) expect(s().status(t.job_id).reason).toBe("dependency_failed");
    // a parent that already ended: nothing is submitted, every task ends at once
    const late = s().run([
      "submit",
      "--json",
      ...target,
      "--after",
      `${parent}:failed`,
      "--array",
      "0-1",
      "--",
      "true",
    ]);
    expect(late.json.state).toBe("cancelled");
    for (const t of tasks(String(late.json.job_id))) expect(s().status(t.job_id).backend_id).toBeNull();
  }, 300_000);

  test("the same client_request_id replays the array; a submit killed before or after its sbatch is completed once", async () => {
    configure();
    const marker = join(s().work, "array-runs");
    const argsFor = (key: string) => [
      "submit",
      "--json",
      ...target,
      "--client-request-id",
      key,
      "--array",
      "0-2",
      "--",
      "sh",
      "-c",
      `echo "$AWAITLESS_ARRAY_INDEX" >> ${marker}.${key}`,
    ];
    for (const [crash, code] of [
      ["AWAITLESS_TEST_CRASH_AFTER_RESERVE", 99],
      ["AWAITLESS_TEST_CRASH_AFTER_LAUNCH", 98],
    ] as const) {
      const key = `arr-${crash.slice(-7)}-${Date.now()}`;
      const args = argsFor(key);
      expect(s().run(args, { env: { [crash]: "1" } }).code).toBe(code);
      const again = s().run(args);
      expect(again.code).toBe(0);
      expect(again.json.idempotent_replay).toBe(true);
      const id = String(again.json.job_id);
      const jobs = await arrayJobsOf(id);
      expect(jobs.size).toBe(1);
      const w = s().run(["wait", "--json", "--timeout", "120s", id]);
      expect(w.json.job_state).toBe("succeeded");
      // a third submit replays: nothing new is submitted
      const third = s().run(args);
      expect(third.json.idempotent_replay).toBe(true);
      expect(await arrayJobsOf(id)).toEqual(jobs);
      // each index ran exactly once: the killed submit's sbatch (when it got through) was adopted, not repeated
      const lines = (await Bun.file(`${marker}.${key}`).text()).trim().split("\n").sort();
      expect(lines).toEqual(["0", "1", "2"]);
    }
  }, 300_000);
});
