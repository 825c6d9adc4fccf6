// The whole job's pure parts: the exit record's new lines and the `leftovers` listing parsed, reconcile rule 2a (an
// exit record while the wrapper lives counts only when it is the wrapper's), OOM kills, and what a launch keeps.
import { describe, expect, test } from "bun:test";
import { capabilitiesOf } from "../../src/backends/capabilities.ts";
import { observationFromRecords } from "../../src/backends/observation-from-records.ts";
import type { Job } from "../../src/core/model/job.ts";
import type { Observation } from "../../src/core/model/observation.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { validateLaunch } from "../../src/core/service/launch-request.ts";
import { againRequest } from "../../src/core/service/submit.ts";
import { parseExitRecord, parseLeftovers, parseStarted } from "../../src/wrapper/protocol.ts";
import { plainSpec } from "../helpers/spec.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

const EXIT = `exit_code=137
signal=KILL
reason=exited
finished_at=1767225605
descendants_alive=1
stdout_dropped=0
stderr_dropped=0
stdout_bytes=4
stderr_bytes=0
wrapper_pid=10
proc_start=500
leftovers=2
leftovers_action=stopped
ran_cs=250
tracking=environment
resources=cgroup
cpu_user_us=1500000
cpu_system_us=250000
max_rss_bytes=209715200
oom_kills=1
${" ".repeat(40)}
`;
const STARTED =
  "protocol=1\nwrapper_pid=10\nmonitor_pid=12\npid=11\npgid=11\nboot_id=b\nproc_start=500\npid_start=501\nstarted_at=1767225600\ntracking=environment\ncgroup=\ncgroups=\n";

describe("the exit record's whole-job lines", () => {
  test("parsed, with the leftovers listing, into what reconcile reads", () => {
    const x = parseExitRecord(EXIT)!;
    expect(x).toMatchObject({
      wrapperPid: 10,
      procStart: "500",
      leftovers: 2,
      leftoversAction: "stopped",
      ranCentis: 250,
      tracking: "environment",
      usage: {
        source: "cgroup",
        cpuUserMicros: 1_500_000,
        cpuSystemMicros: 250_000,
        maxRssBytes: 209715200,
        oomKills: 1,
      },
    });
    const o = observationFromRecords(
      {
        started: parseStarted(STARTED),
        exit: x,
        heartbeat: null,
        queued: null,
        leftovers: "41 sleep 300\n42 node server.js\njunk\n",
      },
      { wrapperAlive: false, bootIdNow: "b" },
    );
    expect(o.exit).toMatchObject({
      wrapper: { pid: 10, proc_start: "500" },
      leftovers: {
        count: 2,
        action: "stopped",
        processes: ["41 sleep 300", "42 node server.js"],
        tracking: "environment",
      },
      resources: {
        cpu_user_seconds: 1.5,
        cpu_system_seconds: 0.25,
        max_rss_bytes: 209715200,
        oom_kills: 1,
        source: "cgroup",
      },
    });
    // the command's end: started plus how long it ran (the record's own time is whole seconds)
    expect(o.exit?.finished_at).toBe(iso(1767225600_000 + 2500));
    expect(o.started?.tracking).toBe("environment");
  });

  test("a listing keeps PID COMMAND lines only, at most 20", () => {
    const many = Array.from({ length: 30 }, (_, i) => `${100 + i} sleep ${i}`).join("\n");
    expect(parseLeftovers(many)).toHaveLength(20);
    expect(parseLeftovers("x\n 1 a\n2 b\n")).toEqual(["2 b"]);
  });

  test("an old wrapper's record has none of them", () => {
    const x = parseExitRecord("exit_code=0\nsignal=\nreason=exited\nfinished_at=7\ndescendants_alive=0\n")!;
    expect(x.wrapperPid).toBeUndefined();
    expect(x.leftovers).toBeUndefined();
    expect(x.usage).toBeUndefined();
  });
});

function job(over: Partial<Job> = {}): Job {
  return {
    job_id: "job_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    name: null,
    backend: "local",
    host: null,
    state: "running",
    spec: plainSpec(),
    fingerprint: "f",
    client_request_id: null,
    created_at: iso(T0),
    started_at: iso(T0),
    finished_at: null,
    job_dir: "/nonexistent",
    backend_id: { wrapper_pid: 10 },
    status_message: null,
    cancel_requested_at: null,
    exit_code: null,
    signal: null,
    reason: null,
    ...over,
  };
}

const ctx = { nowMs: T0 + 60_000, launchGraceSeconds: 30 };
const started = {
  wrapper_pid: 10,
  pid: 11,
  pgid: 11,
  boot_id: "b",
  started_at: iso(T0),
  proc_start: "500",
  tracking: "cgroup" as const,
};
const exitInfo = (o: Partial<NonNullable<Observation["exit"]>> = {}) => ({
  exit_code: 0,
  signal: null,
  reason: "exited" as const,
  finished_at: iso(T0 + 5000),
  descendants_alive: false,
  wrapper: { pid: 10, proc_start: "500" },
  ...o,
});
const obs = (o: Partial<Observation>): Observation => ({
  started,
  exit: exitInfo(),
  wrapperAlive: true,
  bootIdNow: "b",
  heartbeat: null,
  ...o,
});

describe("reconcile rule 2a: an exit record while the wrapper lives", () => {
  test("the wrapper's own (it names the wrapper, the command is gone) decides", () => {
    expect(decide(job(), obs({ commandAlive: false }), ctx)).toMatchObject({
      kind: "terminal",
      to: "succeeded",
    });
  });
  test("while the command still runs it is ignored: the job keeps running, saying why", () => {
    expect(decide(job(), obs({ commandAlive: true }), ctx)).toMatchObject({
      kind: "active",
      to: "running",
      status_message: expect.stringContaining("did not write was ignored"),
    });
    expect(decide(job({ state: "stalled" }), obs({ commandAlive: true }), ctx)).toMatchObject({
      to: "stalled",
    });
  });
  test("naming another wrapper, or none from a wrapper that signs its records, it is ignored", () => {
    const other = obs({ commandAlive: false, exit: exitInfo({ wrapper: { pid: 99, proc_start: "500" } }) });
    expect(decide(job(), other, ctx).kind).toBe("active");
    const restarted = obs({ commandAlive: false, exit: exitInfo({ wrapper: { pid: 10, proc_start: "7" } }) });
    expect(decide(job(), restarted, ctx).kind).toBe("active");
    const unsigned = obs({ commandAlive: false, exit: exitInfo({ wrapper: undefined }) });
    expect(decide(job(), unsigned, ctx).kind).toBe("active");
  });
  test("an older wrapper (its started says nothing of tracking) signs nothing: its record decides as before", () => {
    const { tracking: _t, ...old } = started;
    const o = obs({ started: old, exit: exitInfo({ wrapper: undefined }) });
    expect(decide(job(), o, ctx)).toMatchObject({ kind: "terminal", to: "succeeded" });
  });
  test("the wrapper gone, the record decides", () => {
    expect(decide(job(), obs({ wrapperAlive: false }), ctx)).toMatchObject({
      kind: "terminal",
      to: "succeeded",
    });
  });
});

describe("OOM kills", () => {
  const resources = (oom_kills: number) => ({
    cpu_user_seconds: 1,
    cpu_system_seconds: 0,
    max_rss_bytes: 1,
    oom_kills,
    source: "cgroup" as const,
  });
  test("killed by SIGKILL with OOM kills in the job's cgroup: failed, out_of_memory", () => {
    const x = exitInfo({ exit_code: 137, signal: "KILL", resources: resources(1) });
    expect(decide(job(), obs({ wrapperAlive: false, exit: x }), ctx)).toMatchObject({
      to: "failed",
      reason: "out_of_memory",
      error: { reason: "out_of_memory", retryable: false },
    });
  });
  test("a command that exited with a code after an OOM kill in its tree: its code, the kill said in the detail", () => {
    const x = exitInfo({ exit_code: 1, resources: resources(2) });
    const d = decide(job(), obs({ wrapperAlive: false, exit: x }), ctx);
    expect(d).toMatchObject({ to: "failed", reason: "nonzero_exit" });
    expect(d.kind === "terminal" && d.error?.detail).toContain("OOM killer ended 2 processes");
  });
  test("a cancel's KILL stays a cancel", () => {
    const x = exitInfo({ exit_code: 137, signal: "KILL", reason: "cancelled", resources: resources(1) });
    expect(decide(job(), obs({ wrapperAlive: false, exit: x }), ctx)).toMatchObject({ to: "cancelled" });
  });
});

describe("what a launch keeps", () => {
  const base = { backend: "local" as const, host: null, queue: null, cwd: "/tmp", capabilitiesOf };
  const keep = (req: object, defaults: object = {}) =>
    validateLaunch({ argv: ["true"], ...req }, { ...base, ...defaults }, {}).spec.keep_leftovers;
  test("asked, the host's setting, else [defaults]; absent from the spec when false (old fingerprints unchanged)", () => {
    expect(keep({})).toBeUndefined();
    expect(keep({ keep_leftovers: true })).toBe(true);
    expect(keep({}, { keepLeftovers: true })).toBe(true);
    expect(keep({ keep_leftovers: false }, { keepLeftovers: true })).toBeUndefined();
    const hosts = { keepLeftovers: true, hostKeepLeftovers: { box: false } };
    expect(keep({ backend: "ssh", host: "box" }, hosts)).toBeUndefined();
    expect(keep({ backend: "ssh", host: "other" }, hosts)).toBe(true);
  });
  test("a Slurm job asking for it is refused; the config's defaults do not apply to it", () => {
    expect(() => keep({ backend: "slurm", host: "cl", keep_leftovers: true })).toThrow(
      "a Slurm job cannot keep what its command leaves running",
    );
    expect(keep({ backend: "slurm", host: "cl" }, { keepLeftovers: true })).toBeUndefined();
  });
  test("submit again keeps the job's own setting, whatever the config says now; its fingerprint is the job's", () => {
    for (const asked of [true, false]) {
      const first = validateLaunch({ argv: ["true"], keep_leftovers: asked }, base, {});
      const again = validateLaunch(againRequest(first.spec), { ...base, keepLeftovers: !asked }, {});
      expect(again.spec.keep_leftovers).toBe(first.spec.keep_leftovers);
      expect(again.fingerprint).toBe(first.fingerprint);
    }
  });
});
