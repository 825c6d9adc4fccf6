// One table through the one rulebook (decide): wrapper records as the wrapper writes them, liveness, and scheduler
// facts as Slurm's recorded squeue/sacct lines map to them, for local, SSH and Slurm jobs alike.
import { describe, expect, test } from "bun:test";
import { observationFromRecords } from "../../src/backends/observation-from-records.ts";
import { slurmFacts, unconfirmedFacts } from "../../src/backends/slurm/slurm-facts.ts";
import { wrapperView } from "../../src/backends/slurm/slurm-observe.ts";
import {
  observeSlurmJob,
  parseSacct,
  parseSqueue,
  type SlurmExit,
} from "../../src/backends/slurm/slurm-states.ts";
import type { Job } from "../../src/core/model/job.ts";
import type { Observation } from "../../src/core/model/observation.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { parseExitRecord, parseHeartbeat, parseStarted } from "../../src/wrapper/protocol.ts";
import { plainSpec } from "../helpers/spec.ts";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const sec = (ms: number) => Math.floor(ms / 1000);
const GRACE = 30_000;

/** The wrapper's record files, written as wrapper.sh writes them. */
const started = (bootId = "boot-a") =>
  `protocol=1\nwrapper_pid=10\nmonitor_pid=11\npid=12\npgid=12\nboot_id=${bootId}\nproc_start=5\nstarted_at=${sec(NOW - 30_000)}\n`;
const exitRecord = (code: number | "", signal = "", reason = "exited") =>
  `exit_code=${code}\nsignal=${signal}\nreason=${reason}\nfinished_at=${sec(NOW - 10_000)}\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\n`;
const heartbeat = (agoMs: number) =>
  `now=${sec(NOW - agoMs)}\nout=0\nerr=0\nprogress=0\nlast_change=${sec(NOW - agoMs)}\ninterval=30\n`;

interface Records {
  started?: string;
  exit?: string;
  heartbeat?: string;
}

/** Slurm's lines for the job (squeue `%i|%T|%r|%j|%k`, sacct SACCT_FIELDS) and what observe adds to them. */
interface SlurmInput {
  squeue?: string;
  sacct?: string;
  unsettledSinceMs?: number;
  exitSeenSinceMs?: number;
  scontrolExit?: SlurmExit;
  batchStderr?: string;
}

interface Row {
  name: string;
  backend: "local" | "ssh" | "slurm";
  job?: Partial<Job>;
  records: Records;
  /** local/SSH liveness: is the wrapper alive, the boot ID now. */
  alive?: boolean | null;
  bootIdNow?: string | null;
  unreachable?: string;
  slurm?: SlurmInput;
  expect: Record<string, unknown>;
  /** Text the decision must carry (status message, error detail). */
  says?: string;
}

function job(row: Row): Job {
  const slurm = row.backend === "slurm";
  return {
    job_id: "job_01TEST",
    name: null,
    backend: row.backend,
    host: row.backend === "local" ? null : "c",
    state: "running",
    spec: { ...plainSpec(), ...(slurm ? { slurm_options: { time: "1" } } : {}) },
    fingerprint: "f",
    client_request_id: null,
    created_at: "2026-11-30T11:59:00Z",
    started_at: null,
    finished_at: null,
    job_dir: "/d",
    backend_id: slurm ? { slurm_job_id: "9" } : { wrapper_pid: 10 },
    status_message: null,
    cancel_requested_at: null,
    exit_code: null,
    signal: null,
    reason: null,
    ...row.job,
  };
}

function observation(row: Row, j: Job): Observation {
  const r = row.records;
  if (row.backend !== "slurm") {
    // the mapping local and SSH observe share
    return {
      ...observationFromRecords(
        {
          started: r.started ? parseStarted(r.started) : null,
          exit: r.exit ? parseExitRecord(r.exit) : null,
          heartbeat: r.heartbeat ? parseHeartbeat(r.heartbeat) : null,
          queued: null,
        },
        { wrapperAlive: row.alive ?? null, bootIdNow: row.bootIdNow ?? "boot-a" },
      ),
      ...(row.unreachable ? { unreachable: row.unreachable } : {}),
    };
  }
  // what slurm-observe reports: the same record mapping, no liveness from the login node, Slurm's facts
  const w = wrapperView({ started: r.started ?? null, exit: r.exit ?? null, heartbeat: r.heartbeat ?? null });
  const s = row.slurm ?? {};
  const q = s.squeue ? parseSqueue(s.squeue)[0] : undefined;
  const a = s.sacct ? parseSacct(s.sacct)[0] : undefined;
  const status = observeSlurmJob({ ...(q ? { squeue: q } : {}), ...(a ? { sacct: a } : {}) });
  return {
    ...w,
    wrapperAlive: null,
    bootIdNow: null,
    ...(row.unreachable
      ? { unreachable: row.unreachable }
      : {
          scheduler: slurmFacts({
            job: j,
            slurmJobId: "9",
            status,
            ...(a ? { sacct: a } : {}),
            ...(s.scontrolExit ? { scontrolExit: s.scontrolExit } : {}),
            ...(s.unsettledSinceMs !== undefined ? { unsettledSinceMs: s.unsettledSinceMs } : {}),
            ...(s.exitSeenSinceMs !== undefined ? { exitSeenSinceMs: s.exitSeenSinceMs } : {}),
            ...(s.batchStderr !== undefined ? { batchStderr: s.batchStderr } : {}),
            patience: { accountingGraceMs: GRACE, exitSettleMs: GRACE, launchGraceMs: GRACE },
          }),
        }),
  };
}

const sacct = (state: string, code: string, end = "2026-11-30T11:59:50") =>
  `9|${state}|${code}|None|2026-11-30T11:58:00|2026-11-30T11:59:00|${end}|n|c`;
const STARTED = { started: started() };
/** sacct's line for a second run (after a requeue) that Slurm started at 11:59:55, after every record of STARTED. */
const requeuedRun = (state: string, code: string, end: string) =>
  `9|${state}|${code}|None|2026-11-30T11:58:00|2026-11-30T11:59:55|${end}|n|c`;

const ROWS: Row[] = [
  // ------------------------------------------------ the wrapper's exit record decides, wherever it was read
  ...(["local", "ssh"] as const).flatMap((backend): Row[] => [
    {
      name: "exit 0 → succeeded",
      backend,
      records: { ...STARTED, exit: exitRecord(0) },
      alive: false,
      expect: { to: "succeeded", exit_code: 0, reason: null },
    },
    {
      name: "exit 7 → failed nonzero_exit",
      backend,
      records: { ...STARTED, exit: exitRecord(7) },
      alive: false,
      expect: { to: "failed", exit_code: 7, reason: "nonzero_exit" },
    },
    {
      name: "killed by KILL → failed signaled",
      backend,
      records: { ...STARTED, exit: exitRecord(137, "KILL") },
      alive: false,
      expect: { to: "failed", exit_code: 137, signal: "KILL", reason: "signaled" },
    },
    {
      name: "exit 127 → command_not_found",
      backend,
      records: { ...STARTED, exit: exitRecord(127) },
      expect: { to: "failed", reason: "command_not_found" },
    },
    {
      name: "the wrapper's timeout → timed_out",
      backend,
      records: { ...STARTED, exit: exitRecord(143, "TERM", "timed_out") },
      expect: { to: "timed_out", reason: "timed_out" },
    },
    {
      name: "cancelled before the command ran → cancelled, exit_code null",
      backend,
      records: { exit: exitRecord("", "", "cancelled") },
      expect: { to: "cancelled", exit_code: null, signal: null },
    },
    {
      name: "wrapper gone, no exit record → lost wrapper_killed",
      backend,
      records: STARTED,
      alive: false,
      expect: { to: "lost", reason: "wrapper_killed", exit_code: null },
    },
    {
      name: "another boot ID → lost host_rebooted",
      backend,
      records: STARTED,
      alive: false,
      bootIdNow: "boot-b",
      expect: { to: "lost", reason: "host_rebooted" },
    },
    {
      name: "wrapper alive, started → running",
      backend,
      records: { ...STARTED, heartbeat: heartbeat(5000) },
      alive: true,
      expect: { kind: "active", to: "running" },
    },
    {
      name: "no /proc to ask, heartbeat older than lost-after → lost heartbeat_lost",
      backend,
      records: { ...STARTED, heartbeat: heartbeat(200_000) },
      alive: null,
      expect: { to: "lost", reason: "heartbeat_lost" },
    },
    {
      name: "unreachable target keeps the state",
      backend,
      records: STARTED,
      unreachable: "no route",
      expect: { kind: "unreachable" },
    },
  ]),
  {
    name: "never launched, past the launch grace → lost launch_interrupted",
    backend: "local",
    job: { state: "starting", backend_id: null },
    records: {},
    expect: { to: "lost", reason: "launch_interrupted" },
  },
  // ------------------------------------------------ Slurm: its facts first, then the same wrapper rules
  {
    name: "pending → queued with the reason",
    backend: "slurm",
    job: { state: "queued" },
    records: {},
    slurm: { squeue: "9|PENDING|JobHeldUser|n-job_01TEST|" },
    expect: { kind: "active", to: "queued" },
    says: "JobHeldUser",
  },
  {
    name: "pending again after it ran (requeued) keeps its state",
    backend: "slurm",
    records: {},
    slurm: { squeue: "9|PENDING|BeginTime|n|" },
    expect: { kind: "active", to: "running" },
  },
  {
    name: "running, wrapper not started → starting",
    backend: "slurm",
    job: { state: "queued" },
    records: {},
    slurm: { squeue: "9|RUNNING|None|n|" },
    expect: { kind: "active", to: "starting" },
  },
  {
    name: "running, wrapper started → the wrapper rules: running",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(5000) },
    slurm: { squeue: "9|RUNNING|None|n|", sacct: sacct("RUNNING", "0:0", "Unknown") },
    expect: { kind: "active", to: "running", started_at: "2026-11-30T11:59:30.000Z" },
  },
  {
    name: "running, heartbeat older than lost-after → lost heartbeat_lost (as on a host without /proc)",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(200_000) },
    slurm: {
      squeue: "9|RUNNING|None|n|",
      sacct: sacct("RUNNING", "0:0", "Unknown").replace("11:59:00", "11:55:00"),
    },
    expect: { to: "lost", reason: "heartbeat_lost" },
  },
  // ------------------------------------------------ Slurm: a requeued job's second run, the first run's records left
  {
    name: "requeued and running again: the first run's old heartbeat is ignored, not heartbeat_lost",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(200_000) },
    slurm: { squeue: "9|RUNNING|None|n|", sacct: requeuedRun("RUNNING", "0:0", "Unknown") },
    expect: { kind: "active", to: "running" },
    says: "the wrapper is starting the command",
  },
  {
    name: "requeued and running again: the first run's exit 0 does not end it",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(0) },
    slurm: {
      squeue: "9|RUNNING|None|n|",
      sacct: requeuedRun("RUNNING", "0:0", "Unknown"),
      exitSeenSinceMs: NOW - GRACE,
    },
    expect: { kind: "active", to: "running" },
    says: "the wrapper is starting the command",
  },
  {
    name: "requeued, this run's start not in sacct yet: the records decide nothing (no heartbeat_lost)",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(200_000) },
    slurm: {
      squeue: "9|RUNNING|None|n|",
      sacct: sacct("PENDING", "0:0", "Unknown").replace("11:59:00", "Unknown"),
    },
    expect: { kind: "active", to: "running" },
  },
  {
    name: "first start, sacct without the start yet: the records are this run's (a job that never ran has no others)",
    backend: "slurm",
    job: { state: "starting" },
    records: { ...STARTED, heartbeat: heartbeat(5000) },
    slurm: {
      squeue: "9|RUNNING|None|n|",
      sacct: sacct("PENDING", "0:0", "Unknown").replace("11:59:00", "Unknown"),
    },
    expect: { kind: "active", to: "running", started_at: "2026-11-30T11:59:30.000Z" },
  },
  {
    name: "the second run ended COMPLETED with only the first run's exit 7: not failed 7, it waits for this run's record",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(7) },
    slurm: { sacct: requeuedRun("COMPLETED", "0:0", "2026-11-30T11:59:58"), unsettledSinceMs: NOW - 1000 },
    expect: { kind: "active", to: "running" },
    says: "waiting for the wrapper's exit record",
  },
  {
    name: "the second run's own records (written after its start) decide as usual",
    backend: "slurm",
    records: {
      started: started().replace(`started_at=${sec(NOW - 30_000)}`, `started_at=${sec(NOW - 4000)}`),
      exit: exitRecord(0).replace(`finished_at=${sec(NOW - 10_000)}`, `finished_at=${sec(NOW - 2000)}`),
    },
    slurm: { sacct: requeuedRun("COMPLETED", "0:0", "2026-11-30T11:59:59") },
    expect: { to: "succeeded", exit_code: 0 },
  },
  {
    name: "completing with a plain exit: waits for Slurm's final state within exit_settle",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(7) },
    slurm: { squeue: "9|COMPLETING|None|n|", exitSeenSinceMs: NOW - 1000 },
    expect: { kind: "active", to: "running" },
    says: "exited with code 7, waiting for Slurm's final state",
  },
  {
    name: "completing with a plain exit past exit_settle: the record decides",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(7) },
    slurm: { squeue: "9|COMPLETING|None|n|", exitSeenSinceMs: NOW - GRACE },
    expect: { to: "failed", exit_code: 7, reason: "nonzero_exit" },
  },
  {
    name: "completing with an exit by a signal: waits for Slurm's reason",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(143, "TERM") },
    slurm: { squeue: "9|COMPLETING|None|n|" },
    expect: { kind: "active", to: "running" },
    says: "waiting for Slurm's reason",
  },
  {
    name: "FAILED with a plain exit record: the record decides at once",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(7) },
    slurm: { sacct: sacct("FAILED", "7:0") },
    expect: { to: "failed", exit_code: 7, reason: "nonzero_exit" },
  },
  {
    name: "COMPLETED with exit record 0 → succeeded",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(0) },
    slurm: { sacct: sacct("COMPLETED", "0:0") },
    expect: { to: "succeeded", exit_code: 0 },
  },
  {
    name: "COMPLETED without an exit record waits for it, never succeeded with an invented 0",
    backend: "slurm",
    records: STARTED,
    slurm: { sacct: sacct("COMPLETED", "0:0"), unsettledSinceMs: NOW - 1000 },
    expect: { kind: "active", to: "running" },
    says: "waiting for the wrapper's exit record",
  },
  {
    name: "COMPLETED without an exit record past the accounting grace → lost exit_not_recorded",
    backend: "slurm",
    records: STARTED,
    slurm: { sacct: sacct("COMPLETED", "0:0"), unsettledSinceMs: NOW - GRACE },
    expect: { to: "lost", reason: "exit_not_recorded", exit_code: null, signal: null },
    says: "the wrapper recorded no exit status",
  },
  {
    name: "OUT_OF_MEMORY after a plain exit 0 → failed out_of_memory, the exit said in the detail",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(0) },
    slurm: { sacct: sacct("OUT_OF_MEMORY", "0:125"), exitSeenSinceMs: NOW },
    expect: { to: "failed", reason: "out_of_memory", exit_code: 0, signal: null },
    says: "the command itself exited with code 0",
  },
  {
    name: "OUT_OF_MEMORY with a KILL record → failed out_of_memory, the record's code",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(137, "KILL") },
    slurm: { sacct: sacct("OUT_OF_MEMORY", "0:125") },
    expect: { to: "failed", reason: "out_of_memory", exit_code: 137 },
  },
  {
    name: "NODE_FAIL → failed node_fail, retryable",
    backend: "slurm",
    records: STARTED,
    slurm: { sacct: sacct("NODE_FAIL", "0:0") },
    expect: { to: "failed", reason: "node_fail", error: { retryable: true } },
  },
  {
    name: "TIMEOUT → timed_out time_limit with the wrapper's code",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(143, "TERM") },
    slurm: { sacct: sacct("TIMEOUT", "0:0", "2026-11-30T12:00:00") },
    expect: { to: "timed_out", reason: "time_limit", exit_code: 143, signal: "TERM" },
    says: "the Slurm time limit (time=1) was reached",
  },
  {
    name: "TIMEOUT after the wrapper's own timeout: the record decides",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(143, "TERM", "timed_out") },
    slurm: { sacct: sacct("TIMEOUT", "0:0") },
    expect: { to: "timed_out", reason: "timed_out" },
  },
  {
    name: "CANCELLED without a record → cancelled; a foreign cancel says so",
    backend: "slurm",
    job: { state: "queued" },
    records: {},
    slurm: { sacct: "9|CANCELLED by 0|0:0|None|2026-11-30T11:58:00|None|2026-11-30T11:59:00|n|c" },
    expect: { to: "cancelled", exit_code: null },
    says: "did not come from Awaitless",
  },
  {
    name: "CANCELLED with the record of a command that never ran keeps exit_code null",
    backend: "slurm",
    job: { state: "starting", cancel_requested_at: "2026-11-30T11:59:10Z" },
    records: { exit: exitRecord("", "", "cancelled") },
    slurm: { sacct: sacct("CANCELLED by 0", "0:0") },
    expect: { to: "cancelled", exit_code: null, signal: null },
  },
  {
    name: "FAILED without a record: scontrol's exact code beats sacct's",
    backend: "slurm",
    records: STARTED,
    slurm: { sacct: sacct("FAILED", "72:0"), scontrolExit: { exitCode: 200, exact: true } },
    expect: { to: "failed", exit_code: 200, reason: "nonzero_exit" },
  },
  {
    name: "FAILED 0:9 without a record (the wrapper itself killed) waits out the accounting grace",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(5000) },
    slurm: { sacct: sacct("FAILED", "0:9"), unsettledSinceMs: NOW - 1000 },
    expect: { kind: "active", to: "running" },
    says: "waiting for the wrapper's exit record",
  },
  {
    name: "FAILED 0:9 without a record past the grace → lost wrapper_killed (as on local and SSH)",
    backend: "slurm",
    records: { ...STARTED, heartbeat: heartbeat(5000) },
    slurm: { sacct: sacct("FAILED", "0:9"), unsettledSinceMs: NOW - GRACE },
    expect: { to: "lost", reason: "wrapper_killed", exit_code: null, signal: null },
    says: "the wrapper was killed by signal KILL",
  },
  {
    name: "FAILED 0:9 with the record of a command killed by KILL: the record decides (failed signaled)",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(137, "KILL") },
    slurm: { sacct: sacct("FAILED", "0:9") },
    expect: { to: "failed", reason: "signaled", exit_code: 137, signal: "KILL" },
  },
  {
    name: "FAILED before the wrapper started → launch_failed with the batch stderr",
    backend: "slurm",
    job: { state: "queued" },
    records: {},
    slurm: { sacct: sacct("FAILED", "72:0"), batchStderr: "sh: cannot open wrapper" },
    expect: { to: "failed", reason: "launch_failed", error: { stage: "launch_failed" } },
    says: "cannot open wrapper",
  },
  {
    name: "left the queue, accounting not final: waits out the accounting grace",
    backend: "slurm",
    records: {},
    slurm: { sacct: sacct("RUNNING", "0:0", "Unknown"), unsettledSinceMs: NOW - 10_000 },
    expect: { kind: "active", to: "running" },
    says: "waiting for accounting",
  },
  {
    name: "left the queue, accounting not final past the grace → lost slurm_state_unknown",
    backend: "slurm",
    records: {},
    slurm: { sacct: sacct("RUNNING", "0:0", "Unknown"), unsettledSinceMs: NOW - 31_000 },
    expect: { to: "lost", reason: "slurm_state_unknown" },
    says: "for longer than slurm_accounting_grace",
  },
  {
    name: "listed nowhere past the grace → lost slurm_job_vanished",
    backend: "slurm",
    records: {},
    slurm: { unsettledSinceMs: NOW - 31_000 },
    expect: { to: "lost", reason: "slurm_job_vanished" },
  },
  {
    name: "out of the queue with a plain exit: waits up to exit_settle",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(0) },
    slurm: { sacct: sacct("RUNNING", "0:0", "Unknown"), unsettledSinceMs: NOW, exitSeenSinceMs: NOW - 5000 },
    expect: { kind: "active", to: "running" },
  },
  {
    name: "out of the queue with a plain exit past exit_settle: the record decides",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(0) },
    slurm: { sacct: sacct("RUNNING", "0:0", "Unknown"), unsettledSinceMs: NOW, exitSeenSinceMs: NOW - GRACE },
    expect: { to: "succeeded", exit_code: 0 },
  },
  {
    name: "requeue (squeue COMPLETING, sacct REQUEUED) keeps the job active",
    backend: "slurm",
    records: STARTED,
    slurm: { squeue: "9|COMPLETING|None|n|", sacct: sacct("REQUEUED", "0:0", "2026-11-30T11:59:30") },
    expect: { kind: "active", to: "running" },
    says: "will run it again",
  },
  {
    name: "Slurm unreachable with an exit record: the record decides at once",
    backend: "slurm",
    records: { ...STARTED, exit: exitRecord(3) },
    unreachable: "Slurm on c did not answer",
    expect: { to: "failed", exit_code: 3 },
  },
];

describe("the reconcile table: local, SSH and Slurm inputs through one decide", () => {
  for (const row of ROWS) {
    test(`${row.backend}: ${row.name}`, () => {
      const j = job(row);
      const d = decide(j, observation(row, j), { nowMs: NOW, launchGraceSeconds: GRACE / 1000 });
      expect(d).toMatchObject({ kind: "terminal", ...row.expect });
      if (row.says) expect(JSON.stringify(d)).toContain(row.says);
    });
  }

  test("a terminal job never changes, whatever the scheduler says", () => {
    const row: Row = {
      name: "",
      backend: "slurm",
      records: {},
      slurm: { sacct: sacct("FAILED", "1:0") },
      expect: {},
    };
    const j = job({ ...row, job: { state: "succeeded" } });
    expect(decide(j, observation(row, j), { nowMs: NOW, launchGraceSeconds: 30 })).toEqual({ kind: "none" });
  });

  test("an unconfirmed submission keeps its state until found nowhere past the launch and accounting graces", () => {
    const patience = { accountingGraceMs: GRACE, exitSettleMs: GRACE, launchGraceMs: GRACE };
    const row: Row = { name: "", backend: "slurm", records: {}, expect: {} };
    const look = (j: Job, notFound: boolean, submittedAgoMs: number) =>
      decide(
        j,
        {
          started: null,
          exit: null,
          heartbeat: null,
          wrapperAlive: null,
          bootIdNow: null,
          scheduler: unconfirmedFacts(j, "looking for the tag", notFound, NOW - submittedAgoMs, patience),
        },
        { nowMs: NOW, launchGraceSeconds: GRACE / 1000 },
      );
    const unconfirmed = job({
      ...row,
      job: { state: "starting", backend_id: { submit_unconfirmed: "timeout" } },
    });
    expect(look(unconfirmed, false, 10 * GRACE)).toMatchObject({ kind: "active", to: "starting" });
    expect(look(unconfirmed, true, 2 * GRACE - 1)).toMatchObject({ kind: "active", to: "starting" });
    const lost = look(unconfirmed, true, 2 * GRACE);
    expect(lost).toMatchObject({ kind: "terminal", to: "lost", reason: "submission_not_found" });
    expect(JSON.stringify(lost)).toContain("sbatch's reply was lost (timeout)");
    const never = job({ ...row, job: { state: "starting", backend_id: null } });
    expect(look(never, true, 2 * GRACE)).toMatchObject({ to: "lost", reason: "launch_interrupted" });
  });
});
