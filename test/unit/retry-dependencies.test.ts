// Dependencies on a parent with retries, the decision logic: the wrapper's "is this end the last?" (awl_final_of,
// run in sh) agrees with the client's retryDue for every end the wrapper records; the submit-time plan (the first
// attempt's directory, Slurm's :ok on the last attempt's Slurm job between attempts, :failed/:any held); what a held
// child's reader looks at, what a Slurm child's dependency becomes and when a held one is released (dependencies/retried-parents.ts).
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { capabilitiesOf } from "../../src/backends/capabilities.ts";
import { observationFromRecords } from "../../src/backends/observation-from-records.ts";
import { slurmDependency } from "../../src/backends/slurm/slurm-dependency.ts";
import { planDependencies } from "../../src/core/dependencies/dependency-rules.ts";
import {
  dependencyFailedNow,
  finalOutcome,
  heldChildNow,
  parentsToLookAt,
  slurmWaitsNow,
} from "../../src/core/dependencies/retried-parents.ts";
import type { Job, RetryClass } from "../../src/core/model/job.ts";
import { retryDue } from "../../src/core/retries/retry-policy.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { parseExitRecord, parseStarted } from "../../src/wrapper/protocol.ts";
import { WRAPPER_TEXT } from "../../src/wrapper/scripts.ts";
import { renderSpec } from "../../src/wrapper/spec-render.ts";
import { plainSpec } from "../helpers/spec.ts";

const P = "job_01JD000000000000000000000A";
const Q = "job_01JD000000000000000000000B";
const C = "job_01JD000000000000000000000C";
const NOW = Date.parse("2026-11-30T12:00:00Z");
const sec = (ms: number) => Math.floor(ms / 1000);

const job = (id: string, over: Partial<Job> = {}): Job =>
  ({
    job_id: id,
    backend: "local",
    host: null,
    state: "running",
    job_dir: `/data/jobs/${id}`,
    backend_id: null,
    started_at: null,
    cancel_requested_at: null,
    spec: plainSpec(),
    ...over,
  }) as Job;

/** wrapper.sh's awl_final_of, run in sh: "ok", "failed" or "" (a client may retry). */
function wrapperFinal(code: string, reason: string, left: number, on: RetryClass[]): string {
  const start = WRAPPER_TEXT.indexOf("awl_final_of() {");
  const fn = WRAPPER_TEXT.slice(start, WRAPPER_TEXT.indexOf("\n}\n", start) + 3);
  const out = spawnSync(
    "sh",
    [
      "-c",
      `${fn}AWL_RETRY_LEFT=$1 AWL_RETRY_ON=$2; awl_final_of "$3" "$4"; printf %s "$awl_fo"`,
      "sh",
      String(left),
      on.join(" "),
      code,
      reason,
    ],
    { encoding: "utf8" },
  );
  if (out.status !== 0) throw new Error(out.stderr);
  return out.stdout;
}

/** The client's view of the same exit record: the reconcile decision, then retryDue. */
function clientRetries(code: string, reason: string, attempt: number, retries: number, on: RetryClass[]) {
  const j = job(P, {
    attempt,
    spec: plainSpec({ retry: { retries, on, backoff_seconds: 0 } }),
  });
  const signal = code !== "" && Number(code) > 128 ? "TERM" : "";
  const obs = observationFromRecords(
    {
      started: parseStarted(
        `protocol=1\nwrapper_pid=10\nmonitor_pid=11\npid=12\npgid=12\nboot_id=b\nproc_start=5\nstarted_at=${sec(NOW - 30_000)}\n`,
      ),
      exit: parseExitRecord(
        `exit_code=${code}\nsignal=${signal}\nreason=${reason}\nfinished_at=${sec(NOW - 1000)}\ndescendants_alive=0\nstdout_dropped=0\nstderr_dropped=0\n`,
      ),
      heartbeat: null,
      queued: null,
    },
    { wrapperAlive: false, bootIdNow: "b" },
  );
  const d = decide(j, obs, { nowMs: NOW, launchGraceSeconds: 30 });
  if (d.kind !== "terminal") throw new Error(`not terminal: ${JSON.stringify(d)}`);
  return { retried: retryDue(j, d), outcome: finalOutcome(d.to) };
}

describe("the wrapper's final record agrees with the client's retry decision", () => {
  const ends: [string, string][] = [
    ["0", "exited"],
    ["1", "exited"],
    ["127", "exited"],
    ["143", "exited"],
    ["126", "launch_failed"],
    ["143", "timed_out"],
    ["", "cancelled"],
    ["", "dependency_failed"],
  ];
  const policies: RetryClass[][] = [["exit"], ["infrastructure"], ["lost"], ["exit", "infrastructure"]];
  for (const [code, reason] of ends) {
    test(`${reason}/${code || "-"}: the wrapper says final exactly when no retry follows, with the same outcome`, () => {
      for (const on of policies) {
        for (const [attempt, retries] of [
          [1, 2],
          [3, 2],
          [2, 1],
        ] as const) {
          const left = retries + 1 - attempt;
          const w = wrapperFinal(code, reason, left, on);
          const c = clientRetries(code, reason, attempt, retries, on);
          // "" (a client decides) whenever a retry follows; a final word only when none can
          if (c.retried) expect(w).toBe("");
          else if (w !== "") expect(w).toBe(c.outcome);
          // only the retryable classes leave it to a client
          expect(w === "").toBe(c.retried);
        }
      }
    });
  }
});

describe("plan at submit for a parent with retries", () => {
  const retry = { retries: 2, on: ["exit" as const], backoff_seconds: 1 };
  test("local: the first attempt's directory, waiting for its final record", () => {
    const s = plainSpec({ after: [{ job_id: P, on: "ok" }] });
    const parent = job(P, { attempt: 2, job_dir: `/data/jobs/${P}/attempts/2`, spec: plainSpec({ retry }) });
    expect(planDependencies(s, [parent], capabilitiesOf).waits).toEqual([
      { job_id: P, on: "ok", dir: `/data/jobs/${P}`, final: true },
    ]);
    const text = renderSpec({
      jobId: C,
      cwd: "/",
      argv: ["true"],
      env: {},
      after: { waits: [{ job_id: P, on: "ok", dir: `/data/jobs/${P}`, final: true }], failed: null },
      retry: { attempt: 2, left: 1, on: ["exit", "lost"] },
    });
    expect(text).toContain("AWL_AFTER_1_FINAL=1");
    expect(text).toContain("AWL_ATTEMPT=2\nAWL_RETRY_LEFT=1\nAWL_RETRY_ON='exit lost'");
  });

  test("SSH between attempts: the first attempt's remote directory as recorded", () => {
    const s = plainSpec({ backend: "ssh", host: "box", after: [{ job_id: P, on: "any" }] });
    const parent = job(P, {
      backend: "ssh",
      host: "box",
      attempt: 2,
      state: "queued",
      spec: plainSpec({ retry }),
    });
    const plan = planDependencies(s, [parent], capabilitiesOf, () => [
      { backend_id: { remote_dir: "/home/u/.awl/jobs/P" } },
    ]);
    expect(plan.waits).toEqual([{ job_id: P, on: "any", dir: "/home/u/.awl/jobs/P", final: true }]);
    // launched: its current remote directory, less the attempt's suffix
    const launched = { ...parent, backend_id: { remote_dir: "/home/u/.awl/jobs/P/attempts/2" } };
    expect(planDependencies(s, [launched], capabilitiesOf).waits[0]?.dir).toBe("/home/u/.awl/jobs/P");
  });

  test("Slurm: :ok follows the attempts (the last one's Slurm job between attempts); :failed and :any are held", () => {
    const parent = job(P, {
      backend: "slurm",
      host: "hpc",
      attempt: 2,
      state: "queued",
      job_dir: `/data/jobs/${P}/attempts/2`,
      spec: plainSpec({ retry }),
    });
    const ok = plainSpec({ backend: "slurm", host: "hpc", after: [{ job_id: P, on: "ok" }] });
    const plan = planDependencies(ok, [parent], capabilitiesOf, () => [
      { backend_id: { slurm_job_id: "41" } },
    ]);
    expect(plan.waits[0]?.scheduler_id).toBe("41");
    expect(slurmDependency(plan)).toBe("afterok:41");
    for (const on of ["failed", "any"] as const) {
      const s = plainSpec({ backend: "slurm", host: "hpc", after: [{ job_id: P, on }] });
      const held = planDependencies(s, [parent], capabilitiesOf, () => [
        { backend_id: { slurm_job_id: "41" } },
      ]);
      expect(held.waits).toEqual([{ job_id: P, on, dir: `/data/jobs/${P}`, final: true, hold: true }]);
      // no native afternotok/afterany: Slurm would start the child after attempt 1
      expect(slurmDependency(held)).toBeUndefined();
    }
    // a parent without retries keeps its native dependency
    const plain = job(P, { backend: "slurm", host: "hpc", backend_id: { slurm_job_id: "7" } });
    const s = plainSpec({ backend: "slurm", host: "hpc", after: [{ job_id: P, on: "failed" }] });
    expect(slurmDependency(planDependencies(s, [plain], capabilitiesOf))).toBe("afternotok:7");
  });
});

describe("what a held child's reader looks at", () => {
  const retried = (over: Partial<Job> = {}) =>
    job(P, { spec: plainSpec({ retry: { retries: 1, on: ["lost"], backoff_seconds: 0 } }), ...over });
  const child = (after: Job["spec"]["after"], over: Partial<Job> = {}) =>
    job(C, { state: "queued", spec: plainSpec({ after }), ...over });

  test("only parents with retries, only while the child is held", () => {
    const jobs = new Map([
      [P, retried()],
      [Q, job(Q)],
    ]);
    const get = (id: string) => jobs.get(id);
    const c = child([
      { job_id: P, on: "ok" },
      { job_id: Q, on: "ok" },
    ]);
    expect(parentsToLookAt(c, get).map((p) => p.job_id)).toEqual([P]);
    expect(parentsToLookAt({ ...c, state: "running" }, get)).toEqual([]);
    expect(parentsToLookAt({ ...c, started_at: "2026-11-30T12:00:00Z" }, get)).toEqual([]);
  });

  test("a Slurm child's dependency now: the current attempts' jobs, ended parents that hold left out", () => {
    const jobs = new Map([
      [P, retried({ backend: "slurm", backend_id: { slurm_job_id: "52" } })],
      [Q, job(Q, { backend: "slurm", state: "succeeded", backend_id: { slurm_job_id: "7" } })],
    ]);
    const get = (id: string) => jobs.get(id);
    const c = child(
      [
        { job_id: P, on: "ok" },
        { job_id: Q, on: "ok" },
      ],
      { backend: "slurm" },
    );
    expect(slurmWaitsNow(c, get, capabilitiesOf)?.map((w) => [w.job_id, w.on, w.scheduler_id])).toEqual([
      [P, "ok", "52"],
    ]);
    expect(dependencyFailedNow(c, get)).toBe(false);
    // every parent ended as asked: nothing left to wait for (the dependency is cleared)
    jobs.set(P, retried({ backend: "slurm", state: "succeeded", backend_id: { slurm_job_id: "53" } }));
    expect(slurmWaitsNow(c, get, capabilitiesOf)).toEqual([]);
    // between attempts (no Slurm job yet), or a parent that failed its condition: nothing to move now
    jobs.set(P, retried({ backend: "slurm", state: "queued", backend_id: null }));
    expect(slurmWaitsNow(c, get, capabilitiesOf)).toBeNull();
    jobs.set(Q, job(Q, { backend: "slurm", state: "failed" }));
    expect(slurmWaitsNow(c, get, capabilitiesOf)).toBeNull();
    expect(dependencyFailedNow(c, get)).toBe(true);
  });
});

describe("a held Slurm child: wait, release or end", () => {
  const retried = (over: Partial<Job> = {}) =>
    job(P, {
      backend: "slurm",
      spec: plainSpec({ retry: { retries: 1, on: ["exit"], backoff_seconds: 0 } }),
      backend_id: { slurm_job_id: "52" },
      ...over,
    });
  const held = (after: Job["spec"]["after"], over: Partial<Job> = {}) =>
    job(C, {
      backend: "slurm",
      state: "queued",
      spec: plainSpec({ after }),
      backend_id: { slurm_job_id: "60", held: true },
      ...over,
    });

  test("held while a :failed/:any parent with retries is active, between attempts included", () => {
    for (const on of ["failed", "any"] as const) {
      const c = held([{ job_id: P, on }]);
      expect(heldChildNow(c, () => retried(), capabilitiesOf)).toBe("wait");
      expect(heldChildNow(c, () => retried({ state: "queued", backend_id: null }), capabilitiesOf)).toBe(
        "wait",
      );
    }
  });

  test("released once the parent ended as asked; ended once it cannot hold", () => {
    const c = (on: "failed" | "any") => held([{ job_id: P, on }]);
    expect(heldChildNow(c("failed"), () => retried({ state: "failed" }), capabilitiesOf)).toBe("release");
    expect(heldChildNow(c("failed"), () => retried({ state: "cancelled" }), capabilitiesOf)).toBe("release");
    expect(heldChildNow(c("failed"), () => retried({ state: "succeeded" }), capabilitiesOf)).toBe("failed");
    expect(heldChildNow(c("any"), () => retried({ state: "succeeded" }), capabilitiesOf)).toBe("release");
    expect(heldChildNow(c("any"), () => retried({ state: "failed" }), capabilitiesOf)).toBe("release");
  });

  test("another parent that failed its condition ends it even while the held-for parent is active", () => {
    const jobs = new Map([
      [P, retried()],
      [Q, job(Q, { backend: "slurm", state: "failed" })],
    ]);
    const c = held([
      { job_id: P, on: "any" },
      { job_id: Q, on: "ok" },
    ]);
    expect(heldChildNow(c, (id) => jobs.get(id), capabilitiesOf)).toBe("failed");
  });

  test("its native dependency leaves the held-for parent out; not a held child: nothing to do", () => {
    const jobs = new Map([
      [P, retried({ state: "queued", backend_id: null })],
      [Q, job(Q, { backend: "slurm", backend_id: { slurm_job_id: "7" } })],
    ]);
    const c = held([
      { job_id: P, on: "failed" },
      { job_id: Q, on: "ok" },
    ]);
    expect(slurmWaitsNow(c, (id) => jobs.get(id), capabilitiesOf)?.map((w) => w.scheduler_id)).toEqual(["7"]);
    expect(
      heldChildNow({ ...c, backend_id: { slurm_job_id: "60" } }, (id) => jobs.get(id), capabilitiesOf),
    ).toBeNull();
    expect(heldChildNow({ ...c, state: "running" }, (id) => jobs.get(id), capabilitiesOf)).toBeNull();
    expect(heldChildNow({ ...c, backend: "local" }, (id) => jobs.get(id), capabilitiesOf)).toBeNull();
  });
});
