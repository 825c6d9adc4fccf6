// The launch owner: when a recorded reserving process is certainly gone, and when a retry may take over its launch.
import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { localLaunchOwners } from "../../src/backends/local/launch-owners.ts";
import type { Backend } from "../../src/core/backend/backend.ts";
import type { Job } from "../../src/core/model/job.ts";
import { launchAbandoned } from "../../src/core/rules/launch-owner.ts";

/** A process that has exited and been reaped: its PID names nothing (or, reused, another start time). */
function deadOwner() {
  const p = Bun.spawnSync(["sh", "-c", "echo $$"]);
  const pid = Number(p.stdout.toString().trim());
  return { ...localLaunchOwners.self(), pid, start: "1" };
}

describe("localLaunchOwners.isGone", () => {
  test("this process and a live child are not gone", async () => {
    expect(localLaunchOwners.isGone(localLaunchOwners.self())).toBe(false);
    const child = Bun.spawn(["sleep", "30"]);
    try {
      const start = (await Bun.file(`/proc/${child.pid}/stat`).text()).split(") ")[1]!.split(" ")[19]!;
      expect(localLaunchOwners.isGone({ ...localLaunchOwners.self(), pid: child.pid, start })).toBe(false);
      // the same PID with another start time is a reused PID: the owner is gone
      expect(localLaunchOwners.isGone({ ...localLaunchOwners.self(), pid: child.pid, start: "1" })).toBe(
        true,
      );
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
  });

  test("an exited process is gone; so is any process of an earlier boot", () => {
    expect(localLaunchOwners.isGone(deadOwner())).toBe(true);
    expect(localLaunchOwners.isGone({ ...localLaunchOwners.self(), boot: "another-boot" })).toBe(true);
  });

  test("a process on another machine (a shared store) is never declared gone", () => {
    expect(localLaunchOwners.isGone({ ...deadOwner(), host: `${hostname()}-elsewhere` })).toBe(false);
  });
});

describe("launchAbandoned", () => {
  const owners = localLaunchOwners;
  const job = (over: Partial<Job> = {}): Job =>
    ({
      job_id: "job_01J0000000000000000000000A",
      state: "starting",
      backend_id: null,
      started_at: null,
      cancel_requested_at: null,
      launcher: deadOwner(),
      ...over,
    }) as Job;
  const backend = (never: boolean | "throws") =>
    ({
      neverLaunched: async () => {
        if (never === "throws") throw new Error("host unreachable");
        return never;
      },
    }) as unknown as Backend;

  test("owner gone and no trace of a wrapper: abandoned", async () => {
    expect(await launchAbandoned(job(), backend(true), owners)).toBe(true);
    expect(await launchAbandoned(job({ state: "queued" }), backend(true), owners)).toBe(true);
  });

  test("anything less certain is not", async () => {
    expect(await launchAbandoned(job(), backend(false), owners)).toBe(false);
    expect(await launchAbandoned(job(), backend("throws"), owners)).toBe(false);
    expect(await launchAbandoned(job({ launcher: owners.self() }), backend(true), owners)).toBe(false);
    expect(await launchAbandoned(job({ launcher: null }), backend(true), owners)).toBe(false);
    expect(await launchAbandoned(job({ backend_id: { wrapper_pid: 1 } }), backend(true), owners)).toBe(false);
    expect(
      await launchAbandoned(job({ cancel_requested_at: "2026-01-01T00:00:00Z" }), backend(true), owners),
    ).toBe(false);
    expect(await launchAbandoned(job({ state: "running" }), backend(true), owners)).toBe(false);
    expect(await launchAbandoned(job({ state: "lost" }), backend(true), owners)).toBe(false);
    expect(await launchAbandoned(job(), backend(true), undefined)).toBe(false);
  });
});
