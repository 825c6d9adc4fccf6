// wrapperView: a Slurm job's record texts go through the mapping local and SSH jobs use; an exit record of a command
// that never ran (cancelled during the batch script's start-up) keeps exit_code null through the reconcile rules.
import { describe, expect, test } from "bun:test";
import { observationFromRecords } from "../../src/backends/observation-from-records.ts";
import { slurmFacts } from "../../src/backends/slurm/slurm-facts.ts";
import { wrapperView } from "../../src/backends/slurm/slurm-observe.ts";
import { observeSlurmJob, parseSacct } from "../../src/backends/slurm/slurm-states.ts";
import type { Job } from "../../src/core/model/job.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { parseExitRecord, parseStarted } from "../../src/wrapper/protocol.ts";

// What wrapper.sh writes when the cancel file was there before the command started.
const NEVER_RAN =
  "exit_code=\nsignal=\nreason=cancelled\nfinished_at=1796118318\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\nstdout_bytes=0\nstderr_bytes=0\n";
const KILLED =
  "exit_code=137\nsignal=KILL\nreason=cancelled\nfinished_at=1796118318\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\n";
const STARTED =
  "protocol=1\nwrapper_pid=10\nmonitor_pid=11\npid=12\npgid=12\nboot_id=b\nproc_start=5\nstarted_at=1796118300\n";

function job(): Job {
  return {
    job_id: "job_01TEST",
    name: null,
    backend: "slurm",
    host: "c",
    state: "starting",
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
      slurm_options: {},
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
    cancel_requested_at: "2026-11-30T11:59:10Z",
    exit_code: null,
    signal: null,
    reason: null,
  };
}

describe("the Slurm view of the wrapper's records", () => {
  test("a command that never ran has exit_code null, not 0", () => {
    const v = wrapperView({ started: null, exit: NEVER_RAN, heartbeat: null });
    expect(v.exit).toMatchObject({ exit_code: null, signal: null, reason: "cancelled" });
    expect(v.started).toBeNull();
  });

  test("the same mapping as local and SSH jobs, field for field", () => {
    for (const exit of [NEVER_RAN, KILLED]) {
      const shared = observationFromRecords(
        { started: parseStarted(STARTED), exit: parseExitRecord(exit), heartbeat: null, queued: null },
        { wrapperAlive: null, bootIdNow: null },
      );
      const v = wrapperView({ started: STARTED, exit, heartbeat: null });
      expect(v.exit).toEqual(shared.exit);
      expect(v.started).toEqual(shared.started);
    }
  });

  test("CANCELLED or COMPLETED in sacct with that record: the rules keep exit_code null", () => {
    const view = wrapperView({ started: null, exit: NEVER_RAN, heartbeat: null });
    for (const line of [
      "9|CANCELLED by 0|0:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:20|n|c",
      "9|COMPLETED|0:0|None|2026-11-30T11:58:00|2026-11-30T11:59:00|2026-11-30T11:59:20|n|c",
    ]) {
      const row = parseSacct(line)[0]!;
      const scheduler = slurmFacts({
        job: job(),
        slurmJobId: "9",
        status: observeSlurmJob({ sacct: row }),
        sacct: row,
        patience: { accountingGraceMs: 30_000, exitSettleMs: 30_000, launchGraceMs: 30_000 },
      });
      const d = decide(
        job(),
        { ...view, wrapperAlive: null, bootIdNow: null, scheduler },
        { nowMs: Date.parse("2026-11-30T12:00:00Z"), launchGraceSeconds: 30 },
      );
      expect(d).toMatchObject({ kind: "terminal", to: "cancelled", exit_code: null, signal: null });
    }
  });
});
