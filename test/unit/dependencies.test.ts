// Dependencies' pure parts: the `after` syntax, conditions, the same-target rule and submit-time plan, the spec.sh
// lines, the records a held or dependency_failed wrapper writes, Slurm's --dependency value.
import { describe, expect, test } from "bun:test";
import { capabilitiesOf } from "../../src/backends/capabilities.ts";
import { slurmDependency } from "../../src/backends/slurm/slurm-dependency.ts";
import {
  conditionHolds,
  parseAfter,
  planDependencies,
} from "../../src/core/dependencies/dependency-rules.ts";
import type { Job } from "../../src/core/model/job.ts";
import { afterMessage } from "../../src/core/rules/reconcile.ts";
import { parseExitRecord, parseQueued } from "../../src/wrapper/protocol.ts";
import { renderSpec } from "../../src/wrapper/spec-render.ts";
import { plainSpec } from "../helpers/spec.ts";

const P = "job_01JD000000000000000000000A";
const Q = "job_01JD000000000000000000000B";

const spec = plainSpec;
const job = (id: string, over: Partial<Job> = {}): Job =>
  ({
    job_id: id,
    backend: "local",
    host: null,
    state: "running",
    job_dir: `/data/jobs/${id}`,
    backend_id: null,
    ...over,
  }) as Job;

describe("after syntax", () => {
  test("JOB[:ok|any|failed], ok by default, duplicates folded, conflicts and junk refused", () => {
    expect(parseAfter([P, `${Q}:any`, P])).toEqual([
      { job_id: P, on: "ok" },
      { job_id: Q, on: "any" },
    ]);
    expect(parseAfter(undefined)).toEqual([]);
    expect(() => parseAfter([`${P}:ok`, `${P}:failed`])).toThrow("given twice");
    for (const bad of ["x", `${P}:sometimes`, `${P}:`, "", 7]) expect(() => parseAfter([bad])).toThrow();
    expect(() => parseAfter(Array.from({ length: 65 }, (_, i) => `job_${i}abc`))).toThrow("at most 64");
  });

  test("conditions", () => {
    expect(conditionHolds("ok", "succeeded")).toBe(true);
    expect(conditionHolds("ok", "cancelled")).toBe(false);
    expect(conditionHolds("failed", "lost")).toBe(true);
    expect(conditionHolds("failed", "succeeded")).toBe(false);
    expect(conditionHolds("any", "timed_out")).toBe(true);
  });
});

describe("plan at submit", () => {
  test("ended parents are decided, active ones waited for in their job directory", () => {
    const s = spec({
      after: [
        { job_id: P, on: "ok" },
        { job_id: Q, on: "ok" },
      ],
    });
    const plan = planDependencies(s, [job(P, { state: "succeeded" }), job(Q)], capabilitiesOf);
    expect(plan).toEqual({ waits: [{ job_id: Q, on: "ok", dir: `/data/jobs/${Q}` }], failed: null });
    const failed = planDependencies(s, [job(P, { state: "failed" }), job(Q)], capabilitiesOf);
    expect(failed.failed).toBe(`${P}:ok`);
  });

  test("another target or an unknown parent is refused", () => {
    const s = spec({ backend: "ssh", host: "gpu", after: [{ job_id: P, on: "ok" }] });
    expect(() => planDependencies(s, [job(P)], capabilitiesOf)).toThrow(
      "runs on this machine (local), this job on gpu (ssh)",
    );
    expect(() => planDependencies(s, [], capabilitiesOf)).toThrow(`no job ${P}`);
    const ssh = planDependencies(
      s,
      [job(P, { backend: "ssh", host: "gpu", backend_id: { remote_dir: "/r/p" } })],
      capabilitiesOf,
    );
    expect(ssh.waits[0]?.dir).toBe("/r/p");
  });
});

describe("wire", () => {
  test("spec.sh carries each parent and a failed condition, quoted", () => {
    const text = renderSpec({
      jobId: "job_X",
      cwd: "/",
      argv: ["true"],
      env: {},
      after: { waits: [{ job_id: P, on: "any", dir: "/a dir/p" }], failed: `${Q}:ok` },
    });
    expect(text).toContain("AWL_AFTER_N=1\n");
    expect(text).toContain(`AWL_AFTER_FAILED='${Q}:ok'`);
    expect(text).toContain(`AWL_AFTER_1_ID=${P}\nAWL_AFTER_1_ON=any\nAWL_AFTER_1_DIR='/a dir/p'`);
  });

  test("a held record and a dependency_failed exit record parse", () => {
    const q = parseQueued(`after=${P}:failed\nsince=100\nwrapper_pid=5\n`);
    expect(q?.after).toBe(`${P}:failed`);
    expect(afterMessage(q!.after!)).toBe(`waiting for ${P} to fail`);
    const x = parseExitRecord(
      `exit_code=\nsignal=\nreason=dependency_failed\nfinished_at=5\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\nstdout_bytes=0\nstderr_bytes=0\ndependency=${P}:ok\n`,
    );
    expect(x?.reason).toBe("dependency_failed");
    expect(x?.dependency).toBe(`${P}:ok`);
  });

  test("Slurm: one --dependency value, grouped by type", () => {
    const w = (on: "ok" | "any" | "failed", id: string) => ({ job_id: P, on, dir: "/d", scheduler_id: id });
    expect(slurmDependency({ waits: [w("ok", "12"), w("failed", "14"), w("ok", "13")], failed: null })).toBe(
      "afterok:12:13,afternotok:14",
    );
    expect(slurmDependency({ waits: [], failed: null })).toBeUndefined();
  });
});
