// A job whose command never started (launch interrupted, launch failed, cancelled in its queue) is never shown as
// having run for some time: no elapsed_seconds, duration_seconds null, and no "ran for 38s" in human output.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

/** Every reading surface of one finished job, human and JSON. */
function surfaces(id: string) {
  // wait first: every later read sees the finished job
  return {
    wait: sb.run(["wait", "--json", id]).json,
    waitText: sb.run(["wait", id]).stdout,
    status: sb.run(["status", "--json", id]).json,
    statusText: sb.run(["status", id]).stdout,
    inspect: sb.run(["inspect", "--json", id]).json,
    inspectText: sb.run(["inspect", id]).stdout,
    list: sb
      .run(["list", "--json", "--limit", "1000"])
      .json.jobs.find((j: { job_id: string }) => j.job_id === id),
    listRow:
      sb
        .run(["list", "--limit", "1000"])
        .stdout.split("\n")
        .find((l) => l.startsWith(id)) ?? "",
  };
}

function expectNeverStarted(id: string, state: string): void {
  const s = surfaces(id);
  for (const view of [s.status, s.inspect.job, s.list]) {
    expect(view.state).toBe(state);
    expect(view.started_at).toBeNull();
    expect(view).not.toHaveProperty("elapsed_seconds");
  }
  for (const r of [s.wait, s.inspect.result]) {
    expect(r.started_at).toBeNull();
    expect(r.duration_seconds).toBeNull();
  }
  for (const text of [s.statusText, s.inspectText]) {
    expect(text).toMatch(/ran for\s+never started/);
    expect(text).not.toMatch(/ran for\s+\d/);
  }
  expect(s.waitText).toContain(`${id} ${state} before its command started`);
  expect(s.waitText).not.toMatch(/after \d/);
  // JOB STATE AGE DURATION EXIT …: the duration column says "-", not the time since creation.
  expect(s.listRow.split(/\s{2,}/)[3]).toBe("-");
}

describe("a job that never started has no duration", () => {
  test("lost with launch_interrupted (client killed after reservation)", async () => {
    const own = new Sandbox();
    try {
      own.writeConfig("[defaults]\nlaunch_grace_seconds = 0.5\n");
      const crashed = own.run(["submit", "--", "true"], { env: { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" } });
      expect(crashed.code).toBe(99);
      const id = own.run(["list", "--json"]).json.jobs[0].job_id as string;
      // created long enough ago that "ran for" would show seconds if the duration came from created_at
      await until("the launch grace to pass", () => own.status(id).state === "lost", 15_000);
      const w = own.run(["wait", "--json", id]).json;
      expect(w.reason).toBe("launch_interrupted");
      const st = own.run(["status", "--json", id]).json;
      expect(st).not.toHaveProperty("elapsed_seconds");
      expect(own.run(["status", id]).stdout).toMatch(/ran for\s+never started/);
      expect(w.duration_seconds).toBeNull();
    } finally {
      own.cleanup();
    }
  });

  test("failed with launch_failed (the wrapper's shell does not exist)", () => {
    const r = sb.run(["submit", "--json", "--", "true"], { env: { AWAITLESS_SHELL: "/nonexistent/sh" } });
    expect(r.code).not.toBe(0);
    const id = sb.run(["list", "--json", "--state", "failed"]).json.jobs[0].job_id as string;
    expect(sb.status(id).reason).toBe("launch_failed");
    expectNeverStarted(id, "failed");
  });

  test("cancelled while waiting in its queue", () => {
    expect(sb.run(["queue", "create", "one", "--concurrency", "1"]).code).toBe(0);
    const blocker = sb.submit(["sleep", "30"], ["--queue", "one"]);
    const waiting = sb.submit(["true"], ["--queue", "one"]);
    expect(sb.status(waiting).state).toBe("queued");
    // while it waits, the status shows how long it has waited, not a run time
    expect(sb.run(["status", waiting]).stdout).toMatch(/waiting\s+\d/);
    expect(sb.run(["cancel", "--grace-period", "0", waiting]).code).toBe(0);
    expectNeverStarted(waiting, "cancelled");
    sb.run(["cancel", "--grace-period", "0", blocker]);
  });

  test("a job that ran reports the run time on every surface", () => {
    const id = sb.submit(["sh", "-c", "sleep 0.3"]);
    const s = surfaces(id);
    expect(s.wait.state).toBe("succeeded");
    expect(s.wait.duration_seconds).toBeGreaterThanOrEqual(0.3);
    expect(s.status.elapsed_seconds).toBeGreaterThanOrEqual(0.3);
    expect(s.list.elapsed_seconds).toBe(s.status.elapsed_seconds);
    expect(s.statusText).toMatch(/ran for\s+0\.\ds/);
    expect(s.waitText).toMatch(/succeeded after 0\.\ds/);
  });
});
