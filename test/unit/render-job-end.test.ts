// Human output of what a job left and what it cost: a result with leftovers and resources, and a result stored
// before they existed (it keeps its old warning, and nothing is invented for it).
import { describe, expect, test } from "bun:test";
import { renderResult } from "../../src/cli/output.ts";
import { leftoverLines, resourcesText } from "../../src/cli/render-job-end.ts";
import type { JobResult } from "../../src/core/model/job.ts";

const plain = { color: false };
const OLD: JobResult = {
  job_id: "job_01ARZ3NDEKTSV4RRFFQ69G5FAV",
  name: null,
  backend: "local",
  host: null,
  state: "succeeded",
  exit_code: 0,
  signal: null,
  reason: null,
  created_at: "2026-01-01T00:00:00.000Z",
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:01.000Z",
  duration_seconds: 1,
  stdout_tail: "",
  stderr_tail: "",
  stdout_bytes: 0,
  stderr_bytes: 0,
  stdout_dropped_bytes: 0,
  stderr_dropped_bytes: 0,
  truncated: false,
  descendants_alive: true,
  digest: [],
  artifacts: [],
  parsed_results: {},
  error: null,
  snapshot: { sha256: "0".repeat(64), captured_at: "2026-01-01T00:00:01.000Z" },
};

describe("leftovers and resources for people", () => {
  test("stopped leftovers, one line each, and the tracking caveat by environment", () => {
    const lines = leftoverLines(
      {
        count: 3,
        action: "stopped",
        processes: ["41 sleep 300", "42 node server.js"],
        tracking: "environment",
      },
      OLD.job_id,
      plain,
    );
    expect(lines[0]).toBe(
      "the command left 3 processes running: stopped (TERM, then KILL after the grace period)",
    );
    expect(lines.slice(1, 4)).toEqual(["  41 sleep 300", "  42 node server.js", "  … 1 more"]);
    expect(lines[4]).toContain("cleared it and left the command's session is not seen");
  });

  test("kept leftovers say how to stop them; none left says nothing", () => {
    const kept = leftoverLines(
      { count: 1, action: "kept", processes: ["7 x"], tracking: "cgroup" },
      "job_X",
      plain,
    );
    expect(kept[0]).toBe(
      "the command left 1 process running: kept running (awaitless cancel job_X stops them)",
    );
    expect(
      leftoverLines({ count: 0, action: "stopped", processes: [], tracking: "cgroup" }, "job_X", plain),
    ).toEqual([]);
  });

  test("resources: what is known, and where it came from", () => {
    expect(
      resourcesText({
        cpu_user_seconds: 1.02,
        cpu_system_seconds: 0.1,
        max_rss_bytes: 200 * 1024 * 1024,
        oom_kills: 0,
        source: "cgroup",
      }),
    ).toBe("cpu 1.02s user + 0.10s system, peak memory 200 MiB (cgroup)");
    expect(
      resourcesText({
        cpu_user_seconds: 0.5,
        cpu_system_seconds: 0,
        max_rss_bytes: null,
        oom_kills: null,
        source: "rusage",
      }),
    ).toBe("cpu 0.50s user + 0.00s system (the command's reaped processes)");
    expect(
      resourcesText({
        cpu_user_seconds: null,
        cpu_system_seconds: null,
        max_rss_bytes: null,
        oom_kills: null,
        source: null,
      }),
    ).toBeNull();
  });

  test("a result stored before leftovers existed keeps its descendants_alive warning and gains nothing", () => {
    const text = renderResult(OLD, plain);
    expect(text).toContain("processes the command started are still running (descendants_alive)");
    expect(text).not.toContain("resources:");
    expect(text).not.toContain("the command left");
  });
});
