// Tests squeue/sacct/scontrol/sbatch parsing and the state mapping over outputs recorded from a real Slurm 22.05.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  findTaggedJobs,
  isSqueueUnknownJobError,
  mapSlurmRow,
  observeSlurmJob,
  parseSacct,
  parseSbatchReply,
  parseScontrolJob,
  parseSlurmExitCode,
  parseSqueue,
  SACCT_FIELDS,
  type SlurmRow,
  type SlurmStatus,
  SQUEUE_FORMAT,
  sacctArgs,
  sacctMineArgs,
  squeueArgs,
} from "../../src/backends/slurm/slurm-states.ts";
import type { AwaitlessError } from "../../src/core/model/errors.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "slurm");
const read = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
/** The job (allocation) line of a recorded sacct file that holds one job. */
function jobLine(name: string): SlurmRow {
  const rows = parseSacct(read(name)).filter((r) => r.step === undefined);
  expect(rows).toHaveLength(1);
  return rows[0] as SlurmRow;
}
const byTag = (rows: SlurmRow[], tag: string) =>
  rows.find((r) => r.comment === `awaitless:job_${tag}`) as SlurmRow;
function terminal(status: SlurmStatus) {
  if (status.kind !== "terminal") throw new Error(`expected terminal, got ${JSON.stringify(status)}`);
  return status;
}

test("record.sh requests exactly the formats the parser expects", () => {
  const script = read("record.sh");
  expect(script).toContain(`SQUEUE_FORMAT='${SQUEUE_FORMAT}'`);
  expect(script).toContain(`SACCT_FIELDS='${SACCT_FIELDS}'`);
});

describe("sacct: recorded terminal outcomes (job line decides, steps parsed but ignored)", () => {
  test("COMPLETED → end completed, exit 0", () => {
    const s = terminal(mapSlurmRow(jobLine("sacct-completed.txt"), "sacct"));
    expect(s).toMatchObject({ end: "completed", exit: { exitCode: 0, exact: true } });
    const steps = parseSacct(read("sacct-completed.txt")).filter((r) => r.step !== undefined);
    expect(steps.map((r) => r.step)).toEqual(["batch"]);
    expect(steps[0]?.slurmJobId).toBe(jobLine("sacct-completed.txt").slurmJobId);
  });
  test("FAILED 7:0 → end failed, exit 7 (sacct cannot rule out 135)", () => {
    const s = terminal(mapSlurmRow(jobLine("sacct-failed-exit7.txt"), "sacct"));
    expect(s).toMatchObject({ end: "failed", exit: { exitCode: 7, exact: false } });
    expect(s.statusMessage).toContain("exit code 7 (or that plus 128)");
  });
  test("exit 200 shows as 72:0 in sacct; scontrol has the true 200", () => {
    expect(terminal(mapSlurmRow(jobLine("sacct-failed-exit200.txt"), "sacct")).exit?.exitCode).toBe(72);
    const sc = parseScontrolJob(read("scontrol-exit200.txt"));
    expect(sc).toMatchObject({ slurmState: "FAILED", exitCode: "200:0", reason: "NonZeroExitCode" });
    if (sc === undefined) throw new Error("unparsed");
    const exact = terminal(mapSlurmRow({ ...sc, name: "" }, "scontrol"));
    expect(exact.exit).toEqual({ exitCode: 200, exact: true });
  });
  test("FAILED 0:9 → end failed, KILL, exit 137", () => {
    const s = terminal(mapSlurmRow(jobLine("sacct-failed-sigkill.txt"), "sacct"));
    expect(s).toMatchObject({ end: "failed", exit: { exitCode: 137, signal: "KILL", exact: true } });
  });
  test("OUT_OF_MEMORY 0:125 → end out_of_memory, no invented exit code", () => {
    const s = terminal(mapSlurmRow(jobLine("sacct-out-of-memory.txt"), "sacct"));
    expect(s).toMatchObject({ end: "out_of_memory" });
    expect(s.exit).toBeUndefined();
  });
  test("CANCELLED by <uid> while running and while pending → end cancelled", () => {
    for (const file of ["sacct-cancelled-running.txt", "sacct-cancelled-pending.txt"]) {
      const row = jobLine(file);
      expect(row).toMatchObject({ slurmState: "CANCELLED", cancelledByUid: "1001" });
      const s = terminal(mapSlurmRow(row, "sacct"));
      expect(s.end).toBe("cancelled");
      expect(s.statusMessage).toContain("by uid 1001");
      expect(s.exit).toBeUndefined();
    }
    // a job cancelled while pending never ran: Slurm 22.05 sets Start = End = the cancel time
    const neverRan = jobLine("sacct-cancelled-pending.txt");
    expect(neverRan.start).toBe(neverRan.end as string);
  });
  test("TIMEOUT → end time_limit (the racy .batch CANCELLED line is ignored)", () => {
    const s = observeSlurmJob({ sacct: jobLine("sacct-timeout.txt") });
    expect(terminal(s)).toMatchObject({ end: "time_limit" });
  });
  test("synthetic states a single VM cannot produce", () => {
    const rows = parseSacct(read("sacct-synthetic.txt"));
    const expectTerminal = (tag: string, end: string) => {
      const s = terminal(observeSlurmJob({ sacct: byTag(rows, tag) }));
      expect(s.end).toBe(end as never);
    };
    expectTerminal("SYNnodefail", "node_fail");
    expectTerminal("SYNbootfail", "boot_fail");
    expectTerminal("SYNdeadline", "deadline");
    expectTerminal("SYNpreempted", "preempted");
    expectTerminal("SYNarray", "completed");
    expectTerminal("SYNhet", "failed");
    expect(byTag(rows, "SYNarray").slurmJobId).toBe("107_3");
    expect(byTag(rows, "SYNhet").slurmJobId).toBe("108+0");
    expect(rows.find((r) => r.slurmJobId === "108+0" && r.step === "0")?.slurmState).toBe("FAILED");
    expect(mapSlurmRow(byTag(rows, "SYNrequeuehold"), "sacct").kind).toBe("interrupted");
    expect(mapSlurmRow(byTag(rows, "SYNresizing"), "sacct").kind).toBe("interrupted");
    const piped = byTag(rows, "SYNpipes");
    expect(piped.name).toBe("a|b|name-with-pipes");
    expect(mapSlurmRow(piped, "sacct")).toMatchObject({ kind: "active", state: "running" });
    expect(rows.find((r) => r.slurmJobId === "110")?.slurmState).toBe("CANCELLED");
  });
});

describe("squeue: recorded active states", () => {
  const rows = parseSqueue(read("squeue-active.txt"));
  test("PENDING → queued with the reason in the status message", () => {
    const held = mapSlurmRow(byTag(rows, "RECheld"), "squeue");
    expect(held).toMatchObject({ kind: "active", state: "queued" });
    expect(held.statusMessage).toContain("JobHeldUser");
    expect(held.statusMessage).toContain("held by its owner");
    const huge = mapSlurmRow(byTag(rows, "REChuge"), "squeue");
    expect(huge.statusMessage).toContain("PartitionConfig");
  });
  test("RUNNING and COMPLETING → running", () => {
    expect(mapSlurmRow(byTag(rows, "RECcancelrun"), "squeue")).toMatchObject({
      kind: "active",
      state: "running",
    });
    const completing = parseSqueue(read("squeue-completing.txt"))[0] as SlurmRow;
    expect(completing.slurmState).toBe("COMPLETING");
    expect(mapSlurmRow(completing, "squeue")).toMatchObject({ kind: "active", state: "running" });
  });
  test("SUSPENDED, and pending again after a requeue → interrupted (keep the current state)", () => {
    const queue = parseSqueue(read("squeue-interrupted.txt"));
    const acct = parseSacct(read("sacct-interrupted.txt"));
    const pick = (tag: string) => ({
      squeue: byTag(queue, tag),
      sacct: acct.find((r) => r.slurmJobId === byTag(queue, tag).slurmJobId),
    });
    expect(observeSlurmJob(pick("RECsuspend")).kind).toBe("interrupted");
    const requeued = observeSlurmJob(pick("RECrequeue"));
    expect(requeued.kind).toBe("interrupted");
    expect(requeued.statusMessage).toContain("requeued");
    const held = parseSqueue(read("squeue-requeued-held.txt"));
    expect(observeSlurmJob({ squeue: byTag(held, "RECsuspend") }).kind).toBe("interrupted");
  });
  test("synthetic: pending array, PREEMPTED listed in the queue, STAGE_OUT, unknown words", () => {
    const syn = parseSqueue(read("squeue-synthetic.txt"));
    expect(syn[0]?.slurmJobId).toBe("120_[1-3%2]");
    expect(mapSlurmRow(syn[0] as SlurmRow, "squeue")).toMatchObject({ kind: "active", state: "queued" });
    expect(mapSlurmRow(byTag(syn, "SYNpreempt"), "squeue").kind).toBe("interrupted");
    expect(mapSlurmRow(syn[2] as SlurmRow, "squeue")).toMatchObject({ kind: "active", state: "running" });
    const weird = mapSlurmRow(syn[3] as SlurmRow, "squeue");
    expect(weird.kind).toBe("interrupted");
    expect(weird.statusMessage).toContain("WEIRD_NEW_STATE");
  });
  test("an unknown single job ID is recognisable from stderr", () => {
    expect(isSqueueUnknownJobError(read("squeue-unknown-job.stderr"))).toBe(true);
    expect(isSqueueUnknownJobError("slurm_load_jobs error: Socket timed out")).toBe(false);
  });
});

describe("observeSlurmJob: combining one poll's squeue and sacct", () => {
  const queue = parseSqueue(read("squeue-active.txt"));
  const acct = parseSacct(read("sacct-active.txt"));
  test("squeue wins while the job is listed (sacct can still say PENDING for a running job)", () => {
    const run = byTag(queue, "RECcancelrun");
    expect(run.slurmState).toBe("RUNNING");
    // the first recording caught sacct lagging exactly like this; re-recordings may not
    const lagging = {
      ...(acct.find((r) => r.slurmJobId === run.slurmJobId) as SlurmRow),
      slurmState: "PENDING",
    };
    expect(observeSlurmJob({ squeue: run, sacct: lagging })).toMatchObject({
      kind: "active",
      state: "running",
    });
  });
  test("gone from squeue, sacct not final → unsettled; neither → missing", () => {
    for (const row of acct) expect(observeSlurmJob({ sacct: row }).kind).toBe("unsettled");
    expect(observeSlurmJob({}).kind).toBe("missing");
  });
  test("gone from squeue, sacct final → terminal from sacct", () => {
    expect(terminal(observeSlurmJob({ sacct: jobLine("sacct-failed-exit7.txt") })).exit?.exitCode).toBe(7);
  });
});

describe("exit codes", () => {
  test("N:S decoding", () => {
    expect(parseSlurmExitCode("0:0", "sacct")).toEqual({ exitCode: 0, exact: true });
    expect(parseSlurmExitCode("7:0", "sacct")).toEqual({ exitCode: 7, exact: false });
    expect(parseSlurmExitCode("7:0", "scontrol")).toEqual({ exitCode: 7, exact: true });
    expect(parseSlurmExitCode("0:15", "sacct")).toEqual({ exitCode: 143, signal: "TERM", exact: true });
    expect(parseSlurmExitCode("0:11", "sacct")).toEqual({ exitCode: 139, signal: "SEGV", exact: true });
    expect(parseSlurmExitCode("0:125", "sacct")).toBeUndefined();
    expect(parseSlurmExitCode("", "sacct")).toBeUndefined();
    expect(parseSlurmExitCode("x", "sacct")).toBeUndefined();
  });
});

describe("sbatch replies, tags and queries", () => {
  test("sbatch --parsable replies", () => {
    expect(parseSbatchReply(read("sbatch-reply.txt")).slurmJobId).toMatch(/^\d+$/);
    expect(parseSbatchReply("123;cluster-a\n")).toEqual({ slurmJobId: "123", cluster: "cluster-a" });
    for (const bad of ["", "Submitted batch job 5", "1\n2\n", "12x"]) {
      let error: unknown;
      try {
        parseSbatchReply(bad);
      } catch (e) {
        error = e;
      }
      expect((error as AwaitlessError).code).toBe("launch_failed");
      expect((error as AwaitlessError).hint).toContain("do not resubmit");
    }
  });
  test("find by tag: name or comment, since sacct's name is often the placeholder 'allocation'", () => {
    // recorded: sacct printed JobName "allocation" for this job; match by comment must still work
    const done = { ...jobLine("sacct-completed.txt"), name: "allocation" };
    expect(findTaggedJobs([done], "job_RECok")).toEqual([done.slurmJobId]);
    const byName = parseSqueue(read("squeue-by-name.txt"));
    expect(findTaggedJobs(byName, "job_RECheld")).toHaveLength(1);
    const all = [...parseSqueue(read("squeue-active.txt")), ...parseSacct(read("sacct-active.txt"))];
    expect(findTaggedJobs(all, "job_RECcancelrun")).toHaveLength(1);
    expect(findTaggedJobs(all, "job_RECnothing")).toEqual([]);
    expect(findTaggedJobs(all, "job_REC")).toEqual([]);
  });
  test("query argv: one call for many jobs, explicit start day, allocations only", () => {
    expect(squeueArgs(["1", "2"])).toContain("--jobs=1,2");
    expect(squeueArgs(["7"])).toContain("--jobs=7,7");
    const args = sacctArgs(["1", "2"], new Date("2026-11-30T00:30:00Z"));
    expect(args).toContain("--starttime=2026-11-29");
    expect(args).toContain("--allocations");
    expect(sacctMineArgs(new Date("2026-01-01T00:00:00Z"))).toContain("--starttime=2025-12-31");
  });
  test("garbage lines are reported, not silently skipped", () => {
    expect(() => parseSqueue("JOBID|STATE\n")).toThrow(/squeue/);
    expect(() => parseSacct("1|COMPLETED\n")).toThrow(/sacct/);
  });
});
