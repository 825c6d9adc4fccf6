import { describe, expect, test } from "bun:test";
import type { Job } from "../../src/core/model/job.ts";
import { HEARTBEAT_SECONDS, lostAfterSeconds } from "../../src/core/model/liveness.ts";
import type { Observation } from "../../src/core/model/observation.ts";
import { decide } from "../../src/core/rules/reconcile.ts";
import { SPEC_DEFAULTS } from "../../src/wrapper/protocol.ts";
import { plainSpec } from "../helpers/spec.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

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

const started = { wrapper_pid: 10, pid: 11, pgid: 11, boot_id: "boot-a", started_at: iso(T0) };
const obs = (o: Partial<Observation>): Observation => ({
  started,
  exit: null,
  wrapperAlive: true,
  bootIdNow: "boot-a",
  heartbeat: null,
  ...o,
});
const ctx = { nowMs: T0 + 60_000, launchGraceSeconds: 30 };
const exit = (o: Partial<NonNullable<Observation["exit"]>>) => ({
  exit_code: 0,
  signal: null,
  reason: "exited" as const,
  finished_at: iso(T0 + 5000),
  descendants_alive: false,
  ...o,
});

describe("reconcile rules", () => {
  test("terminal jobs never change", () => {
    expect(decide(job({ state: "succeeded" }), obs({ exit: exit({ exit_code: 1 }) }), ctx).kind).toBe("none");
    expect(decide(job({ state: "lost" }), obs({}), ctx).kind).toBe("none");
  });
  test("exit 0 → succeeded; non-zero → failed; signal → failed with signal", () => {
    expect(decide(job(), obs({ exit: exit({}) }), ctx)).toMatchObject({ kind: "terminal", to: "succeeded" });
    expect(decide(job(), obs({ exit: exit({ exit_code: 3 }) }), ctx)).toMatchObject({
      to: "failed",
      exit_code: 3,
    });
    expect(decide(job(), obs({ exit: exit({ exit_code: 137, signal: "KILL" }) }), ctx)).toMatchObject({
      to: "failed",
      reason: "signaled",
      signal: "KILL",
    });
  });
  test("wrapper reasons map to cancelled / timed_out / launch_failed", () => {
    expect(decide(job(), obs({ exit: exit({ exit_code: 143, reason: "cancelled" }) }), ctx)).toMatchObject({
      to: "cancelled",
    });
    expect(decide(job(), obs({ exit: exit({ exit_code: 143, reason: "timed_out" }) }), ctx)).toMatchObject({
      to: "timed_out",
    });
    expect(
      decide(job(), obs({ exit: exit({ exit_code: 126, reason: "launch_failed" }) }), ctx),
    ).toMatchObject({
      to: "failed",
      reason: "launch_failed",
    });
  });
  test("cancel intent + signal death is cancelled even if the cancel marker was not seen", () => {
    const d = decide(
      job({ cancel_requested_at: iso(T0) }),
      obs({ exit: exit({ exit_code: 143, signal: "TERM" }) }),
      ctx,
    );
    expect(d).toMatchObject({ to: "cancelled" });
  });
  test("cancel intent but a clean exit stays succeeded", () => {
    expect(decide(job({ cancel_requested_at: iso(T0) }), obs({ exit: exit({}) }), ctx)).toMatchObject({
      to: "succeeded",
    });
  });
  test("exit record wins over a dead wrapper", () => {
    expect(decide(job(), obs({ exit: exit({}), wrapperAlive: false }), ctx)).toMatchObject({
      to: "succeeded",
    });
  });
  test("changed boot ID → lost host_rebooted; dead wrapper → lost wrapper_killed", () => {
    expect(decide(job(), obs({ bootIdNow: "boot-b", wrapperAlive: false }), ctx)).toMatchObject({
      to: "lost",
      reason: "host_rebooted",
    });
    expect(decide(job(), obs({ wrapperAlive: false }), ctx)).toMatchObject({
      to: "lost",
      reason: "wrapper_killed",
    });
  });
  test("unreachable keeps the state", () => {
    expect(decide(job(), obs({ unreachable: "host down", wrapperAlive: null }), ctx)).toEqual({
      kind: "unreachable",
      message: "host down",
    });
  });
  test("never launched: starting until the launch grace, then lost launch_interrupted", () => {
    const j = job({ state: "starting", backend_id: null, started_at: null });
    const none = obs({ started: null, wrapperAlive: null, bootIdNow: "boot-a" });
    expect(decide(j, none, { ...ctx, nowMs: T0 + 1000 }).kind).toBe("none");
    expect(decide(j, none, ctx)).toMatchObject({ to: "lost", reason: "launch_interrupted" });
  });
  test("a launch a retry took over gets the launch grace again, counted from its claim", () => {
    const claimedAt = new Date(ctx.nowMs - 10_000).toISOString();
    const launcher = { pid: 1, start: null, boot: null, host: "h", at: claimedAt };
    const j = job({ state: "starting", backend_id: null, started_at: null, launcher });
    const none = obs({ started: null, wrapperAlive: null, bootIdNow: "boot-a" });
    expect(decide(j, none, ctx).kind).toBe("none");
    expect(decide(j, none, { ...ctx, nowMs: ctx.nowMs + 21_000 })).toMatchObject({
      reason: "launch_interrupted",
    });
  });
  test("stall: quiet past stall_timeout → stalled; recent output → running", () => {
    const j = job({ spec: { ...job().spec, stall_timeout_seconds: 10 } });
    const quiet = obs({
      heartbeat: {
        at: iso(ctx.nowMs),
        last_change_at: iso(ctx.nowMs - 20_000),
        stdout_bytes: 1,
        stderr_bytes: 0,
      },
    });
    expect(decide(j, quiet, ctx)).toMatchObject({ kind: "active", to: "stalled" });
    const busy = obs({
      heartbeat: {
        at: iso(ctx.nowMs),
        last_change_at: iso(ctx.nowMs - 2000),
        stdout_bytes: 5,
        stderr_bytes: 0,
      },
    });
    expect(decide({ ...j, state: "stalled" }, busy, ctx)).toMatchObject({ kind: "active", to: "running" });
  });
  test("heartbeat loss: where the wrapper cannot be checked, a heartbeat older than lost-after → lost", () => {
    const hb = (ageS: number, interval?: number) => ({
      at: iso(ctx.nowMs - ageS * 1000),
      last_change_at: iso(T0),
      stdout_bytes: 0,
      stderr_bytes: 0,
      ...(interval === undefined ? {} : { interval_seconds: interval }),
    });
    const limit = lostAfterSeconds(30);
    const unknown = (h: Observation["heartbeat"]) =>
      obs({ wrapperAlive: null, bootIdNow: null, heartbeat: h });
    expect(decide(job(), unknown(hb(limit - 1, 30)), ctx)).toMatchObject({ kind: "active", to: "running" });
    expect(decide(job(), unknown(hb(limit + 1, 30)), ctx)).toMatchObject({
      kind: "terminal",
      to: "lost",
      reason: "heartbeat_lost",
    });
    // The threshold follows the interval the record names: 5 s heartbeats are overdue much sooner.
    expect(decide(job(), unknown(hb(lostAfterSeconds(5) + 1, 5)), ctx)).toMatchObject({
      reason: "heartbeat_lost",
    });
    // A wrapper known alive (its pid checked) is never lost for a late heartbeat (a full disk stops them).
    expect(decide(job(), obs({ heartbeat: hb(10 * limit, 30) }), ctx)).toMatchObject({ to: "running" });
    // No heartbeat yet: counted from started_at with the default interval.
    const young = { ...ctx, nowMs: T0 + (lostAfterSeconds() - 1) * 1000 };
    expect(decide(job(), unknown(null), young)).toMatchObject({ to: "running" });
    const old = { ...ctx, nowMs: T0 + (lostAfterSeconds() + 1) * 1000 };
    expect(decide(job(), unknown(null), old)).toMatchObject({ reason: "heartbeat_lost" });
  });
  test("the wrapper's default heartbeat interval is the one readers derive lost-after from", () => {
    expect(SPEC_DEFAULTS.heartbeatSeconds).toBe(HEARTBEAT_SECONDS);
  });
});
