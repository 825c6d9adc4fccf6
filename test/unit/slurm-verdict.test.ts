// slurmVerdict: Slurm's view combined with the wrapper's records (pure).
import { describe, expect, test } from "bun:test";
import { observeSlurmJob, parseSacct, parseSqueue } from "../../src/backends/slurm/slurm-states.ts";
import { slurmVerdict, type VerdictInput } from "../../src/backends/slurm/slurm-verdict.ts";
import type { ExitInfo } from "../../src/core/backend.ts";
import type { Job } from "../../src/core/job.ts";

const NOW = Date.parse("2026-11-30T12:00:00Z");

function job(state: Job["state"], extra: Partial<Job> = {}): Job {
  return {
    job_id: "job_01TEST",
    name: null,
    backend: "slurm",
    host: "c",
    state,
    spec: {
      argv: ["x"],
      cwd: "/w",
      env: {},
      secret_env: [],
      backend: "slurm",
      host: "c",
      queue: null,
      timeout_seconds: null,
      stall_timeout_seconds: null,
      artifacts: [],
      slurm_options: { time: "1" },
      name: null,
    },
    fingerprint: "f",
    client_request_id: null,
    created_at: "2026-11-30T11:59:00Z",
    started_at: null,
    finished_at: null,
    job_dir: "/d",
    backend_id: { slurm_job_id: "9" },
    status_message: null,
    cancel_requested_at: null,
    exit_code: null,
    signal: null,
    reason: null,
    ...extra,
  };
}

const STARTED = { wrapper_pid: 1, pid: 2, pgid: 2, boot_id: null, started_at: "2026-11-30T11:59:30.000Z" };
const exitRec = (x: Partial<ExitInfo>): ExitInfo => ({
  exit_code: 0,
  signal: null,
  reason: "exited",
  finished_at: "2026-11-30T11:59:50.000Z",
  descendants_alive: false,
  ...x,
});

function input(j: Job, squeue: string, sacct: string, extra: Partial<VerdictInput> = {}): VerdictInput {
  const q = parseSqueue(squeue)[0];
  const a = parseSacct(sacct)[0];
  return {
    job: j,
    nowMs: NOW,
    slurmJobId: "9",
    status: observeSlurmJob({ ...(q ? { squeue: q } : {}), ...(a ? { sacct: a } : {}) }),
    ...(a ? { sacct: a } : {}),
    started: null,
    exit: null,
    accountingGraceMs: 30_000,
    exitSettleMs: 30_000,
    ...extra,
  };
}

describe("slurmVerdict", () => {
  test("pending: queued with the reason; a job that already ran keeps its state", () => {
    const v = slurmVerdict(input(job("queued"), "9|PENDING|JobHeldUser|n-job_01TEST|", ""));
    expect(v).toMatchObject({ kind: "active", to: "queued" });
    expect((v as { status_message: string }).status_message).toContain("JobHeldUser");
    expect(slurmVerdict(input(job("running"), "9|PENDING|BeginTime|n|", ""))).toMatchObject({
      kind: "active",
      to: "running",
    });
  });

  test("running before the wrapper started → starting; after → the wrapper rules", () => {
    expect(slurmVerdict(input(job("queued"), "9|RUNNING|None|n|", ""))).toMatchObject({
      kind: "active",
      to: "starting",
    });
    expect(
      slurmVerdict(input(job("running"), "9|RUNNING|None|n|", "", { started: STARTED })),
    ).toBeUndefined();
  });

  test("a plain exit record waits for Slurm's final state up to exitSettleMs, then decides; a signal waits for Slurm's reason", () => {
    const running = "9|COMPLETING|None|n|";
    const seven = exitRec({ exit_code: 7 });
    const waiting = slurmVerdict(
      input(job("running"), running, "", { started: STARTED, exit: seven, exitSeenSinceMs: NOW - 1000 }),
    );
    expect(waiting).toMatchObject({ kind: "active", to: "running" });
    expect((waiting as { status_message: string }).status_message).toContain(
      "exited with code 7, waiting for Slurm's final state",
    );
    expect(
      slurmVerdict(
        input(job("running"), running, "", { started: STARTED, exit: seven, exitSeenSinceMs: NOW - 30_000 }),
      ),
    ).toBeUndefined();
    const sig = exitRec({ exit_code: 143, signal: "TERM" });
    expect(slurmVerdict(input(job("running"), running, "", { started: STARTED, exit: sig }))).toMatchObject({
      kind: "active",
      to: "running",
    });
  });

  test("COMPLETED/FAILED with a plain exit record: the record decides at once", () => {
    const sacct = "9|FAILED|7:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:01|n|c";
    expect(
      slurmVerdict(input(job("running"), "", sacct, { started: STARTED, exit: exitRec({ exit_code: 7 }) })),
    ).toBeUndefined();
  });

  test("OUT_OF_MEMORY after a plain exit 0 (a child was OOM-killed, the shell went on) → failed/out_of_memory", () => {
    const sacct =
      "9|OUT_OF_MEMORY|0:125|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:01|n|c";
    const v = slurmVerdict(
      input(job("running"), "", sacct, { started: STARTED, exit: exitRec({}), exitSeenSinceMs: NOW }),
    );
    expect(v).toMatchObject({ to: "failed", reason: "out_of_memory", exit_code: 0, signal: null });
    expect(JSON.stringify(v)).toContain("the command itself exited with code 0");
  });

  test("TIMEOUT → timed_out/time_limit with the wrapper's code when it wrote one", () => {
    const sacct = "9|TIMEOUT|0:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T12:00:00|n|c";
    const v = slurmVerdict(
      input(job("running"), "", sacct, {
        started: STARTED,
        exit: exitRec({ exit_code: 143, signal: "TERM" }),
      }),
    );
    expect(v).toMatchObject({
      kind: "terminal",
      to: "timed_out",
      reason: "time_limit",
      exit_code: 143,
      signal: "TERM",
    });
  });

  test("CANCELLED without an exit record → cancelled; foreign cancels say so", () => {
    const sacct = "9|CANCELLED by 0|0:0|None|2026-11-30T11:58:00|None|2026-11-30T11:59:00|n|c";
    const v = slurmVerdict(input(job("queued"), "", sacct));
    expect(v).toMatchObject({ kind: "terminal", to: "cancelled", exit_code: null });
    expect(JSON.stringify(v)).toContain("did not come from Awaitless");
  });

  test("FAILED without a record: scontrol's exact code beats sacct's; never started → launch_failed", () => {
    const sacct = "9|FAILED|72:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:01|n|c";
    const v = slurmVerdict(
      input(job("running"), "", sacct, { started: STARTED, scontrolExit: { exitCode: 200, exact: true } }),
    );
    expect(v).toMatchObject({ to: "failed", exit_code: 200, reason: "nonzero_exit" });
    const never = slurmVerdict(input(job("queued"), "", sacct, { batchStderr: "sh: cannot open wrapper" }));
    expect(never).toMatchObject({ to: "failed", reason: "launch_failed" });
    expect(JSON.stringify(never)).toContain("cannot open wrapper");
  });

  test("OUT_OF_MEMORY → failed/out_of_memory with the wrapper's exit code", () => {
    const sacct =
      "9|OUT_OF_MEMORY|0:125|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:01|n|c";
    expect(
      slurmVerdict(
        input(job("running"), "", sacct, {
          started: STARTED,
          exit: exitRec({ exit_code: 137, signal: "KILL" }),
        }),
      ),
    ).toMatchObject({
      to: "failed",
      reason: "out_of_memory",
      exit_code: 137,
    });
  });

  test("left the queue, accounting not final: wait out slurm_accounting_grace, then lost", () => {
    const sacct = "9|RUNNING|0:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|Unknown|n|c";
    expect(slurmVerdict(input(job("running"), "", sacct, { unsettledSinceMs: NOW - 10_000 }))).toMatchObject({
      kind: "active",
      to: "running",
    });
    expect(slurmVerdict(input(job("running"), "", sacct, { unsettledSinceMs: NOW - 31_000 }))).toMatchObject({
      to: "lost",
      reason: "slurm_state_unknown",
    });
    expect(slurmVerdict(input(job("running"), "", "", { unsettledSinceMs: NOW - 31_000 }))).toMatchObject({
      to: "lost",
      reason: "slurm_job_vanished",
    });
    // a plain exit record settles it once exitSettleMs has passed (Slurm could still say OUT_OF_MEMORY before)
    const plain = { unsettledSinceMs: NOW, exit: exitRec({}) };
    expect(
      slurmVerdict(input(job("running"), "", sacct, { ...plain, exitSeenSinceMs: NOW - 5000 })),
    ).toMatchObject({ kind: "active", to: "running" });
    expect(
      slurmVerdict(input(job("running"), "", sacct, { ...plain, exitSeenSinceMs: NOW - 30_000 })),
    ).toBeUndefined();
  });

  test("requeue (squeue COMPLETING, sacct REQUEUED) keeps the job active", () => {
    const sacct = "9|REQUEUED|0:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:30|n|c";
    expect(
      slurmVerdict(input(job("running"), "9|COMPLETING|None|n|", sacct, { started: STARTED })),
    ).toMatchObject({ kind: "active", to: "running" });
  });
});
