// Benchmark of a job array on the Slurm test cluster (bash test/infra/slurm-up.sh, as root): a 1,000-task array of
// `true` is one sbatch, and the scheduler calls per minute while it runs (a waiter on the array) are those of one job
// with one waiter. Medians and ratios against baselines measured in the same run, printed as bench/slurm.ts does.
// Usage: bun bench/slurm-arrays.ts [--quick] [--tasks N]
import { slurmIdOf } from "../src/core/model/backend-id.ts";
import { isTerminal } from "../src/core/model/job.ts";
import { makeRig, run } from "../test/e2e/slurm-harness.ts";
import { printRatioTable } from "./ratio-table.ts";

const quick = process.argv.includes("--quick");
const tasksArg = process.argv.indexOf("--tasks");
const TASKS = tasksArg > 0 ? Number(process.argv[tasksArg + 1]) : quick ? 100 : 1000;
const POLL_MS = 2000; // a short slurm_poll_interval_seconds (the default is 15 s): more rounds per window
const WINDOW_MS = quick ? 10_000 : 20_000;
const BASELINE_WINDOWS = quick ? 2 : 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const perMinute = (calls: number, ms: number) => (calls * 60_000) / ms;

const ping = await run(["scontrol", "ping"]).catch(() => undefined);
if (!ping || !/UP/.test(ping.stdout) || process.getuid?.() !== 0) {
  console.error("bench/slurm-arrays.ts needs the test cluster up and root: sudo bash test/infra/slurm-up.sh");
  process.exit(2);
}

const rig = makeRig({ pollIntervalMs: POLL_MS });
const base = {
  backend: "slurm",
  host: "localhost",
  cwd: rig.root,
  allow_duplicate: true,
  slurm_options: { mem: "16M" },
} as const;
const schedulerCalls = (since: number) =>
  rig.runner.calls.filter((c) => c.atMs >= since && (c.program === "squeue" || c.program === "sacct")).length;

// 1. Baseline: one job, one waiter: the calls one poller makes per minute for it.
const single = (await rig.service.submit({ ...base, argv: ["sleep", "900"] })).job_id;
const one: number[] = [];
for (let w = 0; w < BASELINE_WINDOWS; w++) {
  const since = Date.now();
  await rig.service.wait(single, { timeoutMs: WINDOW_MS });
  one.push(perMinute(schedulerCalls(since), Date.now() - since));
}
await rig.service.cancel(single, 0);

// 2. The array: one submission, then windows of a waiter on the array until every task ended.
const sbatchBefore = rig.runner.calls.filter((c) => c.program === "sbatch").length;
const submitStart = Date.now();
const sub = await rig.service.arrays.submit({ ...base, argv: ["true"] }, `0-${TASKS - 1}`);
const submitMs = Date.now() - submitStart;
const sbatchCalls = rig.runner.calls.filter((c) => c.program === "sbatch").length - sbatchBefore;
const firstTask = (await rig.service.arrays.status(sub.job_id)).task_list[0]!;
const arrayJob = String(slurmIdOf(rig.service.getJob(firstTask.job_id))?.slurm_job_id).split("_")[0];
const windows: number[] = [];
const arrayStart = Date.now();
let state = sub.state;
let counts = sub.counts;
const deadline = Date.now() + (quick ? 15 : 60) * 60_000;
while (!isTerminal(state) && Date.now() < deadline) {
  const since = Date.now();
  const w = await rig.service.arrays.wait(sub.job_id, { timeoutMs: WINDOW_MS });
  const took = Date.now() - since;
  // a window cut short by the array's end is too short to count
  if (took >= WINDOW_MS * 0.9) windows.push(perMinute(schedulerCalls(since), took));
  state = w.state;
  counts = w.counts;
}
const arrayMs = Date.now() - arrayStart;
if (!isTerminal(state) && arrayJob) await run(["scancel", arrayJob]);
rig.close();

const rows = [
  {
    what: `sbatch calls to submit a ${TASKS}-task array`,
    median: sbatchCalls,
    unit: "calls",
    baseline: "one sbatch per task",
    baselineMedian: TASKS,
  },
  {
    what: `scheduler calls per minute while the ${TASKS}-task array runs (waiter on the array), ${POLL_MS / 1000} s interval`,
    median: median(windows),
    unit: "calls/min",
    baseline: "one job, one waiter",
    baselineMedian: median(one),
  },
  {
    what: "the same if each task were polled on its own (squeue + sacct per task per interval)",
    median: median(windows),
    unit: "calls/min",
    baseline: "per-task polling (computed)",
    baselineMedian: perMinute(2 * TASKS, POLL_MS),
  },
];
printRatioTable(rows);
console.log(
  `\nsubmit ${(submitMs / 1000).toFixed(1)} s; every task ended after ${(arrayMs / 1000).toFixed(0)} s (${state}: ${JSON.stringify(counts)}); ` +
    `${windows.length} full windows of ${WINDOW_MS / 1000} s, baseline ${BASELINE_WINDOWS}\n` +
    `${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · Slurm test cluster (1 node)${quick ? " (quick)" : ""}`,
);
