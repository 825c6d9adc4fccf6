// Slurm arrays without a cluster: chunks at MaxArraySize, task IDs in --array syntax, array rows of squeue/sacct
// (one line per task with --array, collapsed pending lines) mapped to task rows, scancel targets, MaxArraySize parsing.
import { describe, expect, test } from "bun:test";
import type { CommandRunner, ExecOptions, RunResult } from "../../src/backends/slurm/runner.ts";
import {
  arrayChunks,
  chunkTag,
  findArrayTasks,
  scancelTargets,
} from "../../src/backends/slurm/slurm-array.ts";
import {
  arrayIndexText,
  arrayTaskOf,
  expandCollapsedArrayId,
  findTaggedJobs,
  parseMaxArraySize,
  parseSacct,
  parseSqueue,
  squeueArgs,
  squeueByNameArgs,
} from "../../src/backends/slurm/slurm-queries.ts";
import { queryIds, runRound } from "../../src/backends/slurm/slurm-round.ts";
import { observeSlurmJob } from "../../src/backends/slurm/slurm-states.ts";
import { findByTag } from "../../src/backends/slurm/slurm-submit.ts";
import type { Job } from "../../src/core/model/job.ts";

describe("array chunks", () => {
  test("every index below MaxArraySize: one chunk, Slurm task ID = index", () => {
    expect(arrayChunks([0, 1, 2, 500, 1000], 1001)).toEqual([
      { k: 0, base: 0, indices: [0, 1, 2, 500, 1000] },
    ]);
  });
  test("past it: each further chunk starts at its first index (Slurm task ID 0)", () => {
    expect(arrayChunks([0, 1, 2, 3, 4, 9, 10], 3)).toEqual([
      { k: 0, base: 0, indices: [0, 1, 2] },
      { k: 1, base: 3, indices: [3, 4] },
      { k: 2, base: 9, indices: [9, 10] },
    ]);
    expect(arrayChunks([5000, 5001], 1001)).toEqual([{ k: 0, base: 5000, indices: [5000, 5001] }]);
  });
  test("tags: the array's ID, then ARRAY_ID.k", () => {
    expect(chunkTag("job_A", 0)).toBe("job_A");
    expect(chunkTag("job_A", 2)).toBe("job_A.2");
  });
  test("task IDs in --array syntax", () => {
    expect(arrayIndexText([0, 1, 2, 3, 7, 9, 10])).toBe("0-3,7,9-10");
    expect(arrayIndexText([4])).toBe("4");
  });
});

describe("array rows of squeue and sacct", () => {
  test("squeue is asked with --array (pending tasks one line each, also with --jobs and --name)", () => {
    expect(squeueArgs(["12"])).toContain("--array");
    expect(squeueByNameArgs("x-job_A")).toContain("--array");
  });
  test("find-by-tag sees a job or task that ended a moment ago, before the accounting has it (squeue --states=all)", async () => {
    // the controller still lists ended jobs when asked for every state; the accounting has not caught up
    const runner = {
      label: "fake",
      isLocal: true,
      exec: async (argv: readonly string[], _o: ExecOptions): Promise<RunResult> => {
        if (argv[0] !== "squeue") return { code: 0, stdout: "", stderr: "" };
        if (!argv.includes("--states=all")) return { code: 0, stdout: "", stderr: "" };
        return {
          code: 0,
          stdout: argv.some((a) => a.includes("job_ARR"))
            ? "41_0|COMPLETED|None|n-job_ARR|awaitless:job_ARR\n41_1|RUNNING|None|n-job_ARR|awaitless:job_ARR\n"
            : "40|COMPLETED|None|n-job_ONE|awaitless:job_ONE\n",
          stderr: "",
        };
      },
    } as unknown as CommandRunner;
    expect(await findByTag(runner, { jobId: "job_ONE", jobName: "n" }, new Date(), 1000)).toEqual(["40"]);
    const host = { runner, name: "fake", settings: { callTimeoutMs: 1000 } } as unknown as Parameters<
      typeof findArrayTasks
    >[0];
    expect(await findArrayTasks(host, "job_ARR", "n", new Date())).toEqual(["41_0", "41_1"]);
  });
  test("task IDs and collapsed lines", () => {
    expect(arrayTaskOf("1663_4")).toEqual({ arrayJobId: "1663", taskId: 4 });
    expect(arrayTaskOf("1663")).toBeUndefined();
    expect(arrayTaskOf("1663_[0,4]")).toBeUndefined();
    expect(expandCollapsedArrayId("1663_[0,4]")).toEqual(["1663_0", "1663_4"]);
    expect(expandCollapsedArrayId("1663_[1-3%1]")).toEqual(["1663_1", "1663_2", "1663_3"]);
    expect(expandCollapsedArrayId("1663_5")).toBeUndefined();
  });
  test("squeue --array rows parse per task; a collapsed row (no --array) parses as one line", () => {
    const rows = parseSqueue(
      "2311_4|PENDING|JobArrayTaskLimit|sweep-job_A|awaitless:job_A\n2311_0|RUNNING|None|sweep-job_A|awaitless:job_A\n2311_[1,5]|PENDING|None|sweep-job_A|(null)\n",
    );
    expect(rows.map((r) => r.slurmJobId)).toEqual(["2311_4", "2311_0", "2311_[1,5]"]);
    expect(observeSlurmJob({ squeue: rows[0]! })).toMatchObject({ kind: "active", state: "queued" });
    expect(observeSlurmJob({ squeue: rows[1]! })).toMatchObject({ kind: "active", state: "running" });
    // find-by-tag sees every task, collapsed ones expanded
    expect(findTaggedJobs(rows, "job_A")).toEqual(["2311_0", "2311_1", "2311_4", "2311_5"]);
  });
  test("the round asks by array job and maps its lines to the tasks asked about; collapsed lines fill the rest", async () => {
    expect(queryIds(["7_1", "7_2", "8", "9_0"])).toEqual(["7", "8", "9"]);
    const calls: string[][] = [];
    const runner = {
      label: "fake",
      isLocal: true,
      exec: async (argv: readonly string[], _o: ExecOptions): Promise<RunResult> => {
        calls.push([...argv]);
        if (argv[0] === "squeue")
          return { code: 0, stdout: "7_1|RUNNING|None|n-job_A|\n7_9|PENDING|None|n-job_A|\n", stderr: "" };
        return {
          code: 0,
          stdout:
            "7_0|COMPLETED|0:0|None|2026-12-01T10:00:00|2026-12-01T10:00:01|2026-12-01T10:00:02|n-job_A|\n7_1|RUNNING|0:0|None|2026-12-01T10:00:00|2026-12-01T10:00:01|Unknown|n-job_A|\n7_[2-3]|CANCELLED by 0|0:0|None|2026-12-01T10:00:00|None|2026-12-01T10:00:05|n-job_A|\n",
          stderr: "",
        };
      },
    } as unknown as CommandRunner;
    const snap = await runRound(
      runner,
      ["7_0", "7_1", "7_2", "7_3"],
      Date.now(),
      { intervalMs: 1000, maxIntervalMs: 4000, callTimeoutMs: 1000 },
      1000,
    );
    expect(snap.error).toBeUndefined();
    expect(calls.find((c) => c[0] === "squeue")).toContain("--jobs=7,7");
    expect(calls.find((c) => c[0] === "sacct")).toContain("--jobs=7");
    expect(observeSlurmJob(snap.rows.get("7_0")!)).toMatchObject({ kind: "terminal", end: "completed" });
    expect(observeSlurmJob(snap.rows.get("7_1")!)).toMatchObject({ kind: "active", state: "running" });
    // cancelled while pending: only the collapsed line says so
    expect(snap.rows.get("7_2")?.sacct).toMatchObject({ slurmJobId: "7_2", collapsed: true });
    expect(observeSlurmJob(snap.rows.get("7_3")!)).toMatchObject({ kind: "terminal", end: "cancelled" });
    // a task not asked about is not kept
    expect(snap.rows.has("7_9")).toBe(false);
  });
  test("sacct rows of tasks keep their task IDs", () => {
    const rows = parseSacct(
      "2314_0|CANCELLED by 0|0:0|None|a|b|c|n|\n2314_[1-3%1]|CANCELLED by 0|0:0|None|a|b|c|n|\n",
    );
    expect(rows.map((r) => r.slurmJobId)).toEqual(["2314_0", "2314_[1-3%1]"]);
  });
});

describe("cluster facts and cancel", () => {
  test("MaxArraySize from scontrol show config", () => {
    expect(parseMaxArraySize("MaxArraySize            = 1001\nMaxJobCount             = 10000\n")).toBe(1001);
    expect(parseMaxArraySize("MaxJobCount = 10\n")).toBeUndefined();
  });
  test("scancel: each chunk once by its array job, other jobs by their own ID", () => {
    const job = (bid: Record<string, unknown>) => ({ backend_id: bid }) as unknown as Job;
    expect(
      scancelTargets([
        job({ slurm_job_id: "7_0", array_job_id: "7" }),
        job({ slurm_job_id: "7_1", array_job_id: "7" }),
        job({ slurm_job_id: "8_0", array_job_id: "8" }),
        job({ slurm_job_id: "9" }),
        job({}),
      ]),
    ).toEqual(["7", "8", "9"]);
  });
});
