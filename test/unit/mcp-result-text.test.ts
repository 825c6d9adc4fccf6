// The MCP text of a result and compact answers, on hand-made results: every piece in words, new fields passed through.
import { describe, expect, test } from "bun:test";
import { compactAnswer } from "../../src/mcp/compact.ts";
import { finishedText, pendingHead, pendingText } from "../../src/mcp/result-text.ts";

const base = {
  job_id: "job_X",
  name: null,
  backend: "local",
  host: null,
  state: "failed",
  exit_code: 137,
  signal: "SIGKILL",
  reason: "oom_killed",
  created_at: "2026-01-01T00:00:00.000Z",
  started_at: "2026-01-01T00:00:01.000Z",
  finished_at: "2026-01-01T00:04:13.000Z",
  duration_seconds: 252,
  stdout_tail: "epoch 1\nepoch 2\n",
  stderr_tail: "Killed\n",
  stdout_bytes: 16,
  stderr_bytes: 7,
  stdout_dropped_bytes: 0,
  stderr_dropped_bytes: 0,
  truncated: false,
  descendants_alive: false,
  digest: ["Killed"],
  artifacts: [],
  parsed_results: {},
  error: {
    stage: "runtime_failed",
    reason: "killed by the kernel (out of memory)",
    retryable: false,
    suggestion: "use less memory",
  },
  snapshot: { sha256: "a".repeat(64), captured_at: "2026-01-01T00:04:14.000Z" },
  job_state: "failed",
  wait_state: "complete",
  delivery_state: "delivered",
  waited_seconds: 250,
};

describe("the text of a finished job", () => {
  test("how it ended, the error, the digest and both tails", () => {
    const text = finishedText(base);
    expect(text).toStartWith("Job job_X failed with exit code 137 (SIGKILL, oom_killed) after 4m12s.\n");
    expect(text).toContain(
      "Error: runtime_failed: killed by the kernel (out of memory).\nSuggestion: use less memory.",
    );
    expect(text).toContain(
      "Digest:\nKilled\nstdout (16 bytes):\nepoch 1\nepoch 2\nstderr (7 bytes):\nKilled",
    );
    // bookkeeping stays in structuredContent
    for (const left of ["2026-01-01", "aaaa", "waited", "complete", "delivered"])
      expect(text).not.toContain(left);
  });

  test("leftovers (when any), resources (when they say something), and a field it has no words for reach the text", () => {
    const text = finishedText({
      ...base,
      leftovers: {
        count: 2,
        action: "stopped",
        processes: ["4242 sleep 600", "4243 tail -f log"],
        tracking: "cgroup",
      },
      resources: {
        cpu_user_seconds: 12.345,
        cpu_system_seconds: 0.5,
        max_rss_bytes: 2147483648,
        oom_kills: 0,
        source: "cgroup",
      },
      gpu_seconds: 30,
    });
    expect(text).toContain(
      "Leftovers: 2 process(es) outlived the command and were stopped (tracking: cgroup):\n4242 sleep 600\n4243 tail -f log",
    );
    expect(text).toContain("Resources: cpu 12.35s user + 0.5s system, peak memory 2048 MiB (cgroup).");
    expect(text).toContain("gpu_seconds: 30");
    const kept = finishedText({ ...base, leftovers: { count: 1, action: "kept", processes: ["7 srv"] } });
    expect(kept).toContain(
      "Leftovers: 1 process(es) outlived the command and were kept running (cancel_job stops them):\n7 srv",
    );
    const none = finishedText({ ...base, leftovers: { count: 0, action: "stopped", processes: [] } });
    expect(none).not.toContain("Leftovers");
  });

  test("resources: a quick command's tiny figures are left to structuredContent; an OOM kill, 1 s of CPU or 100 MiB are worded", () => {
    const r = (resources: Record<string, unknown>) => finishedText({ ...base, resources });
    const tiny = {
      cpu_user_seconds: 0.004,
      cpu_system_seconds: 0.01,
      max_rss_bytes: 524288,
      oom_kills: 0,
      source: "cgroup",
    };
    expect(r(tiny)).not.toContain("Resources");
    expect(r({ ...tiny, oom_kills: 1 })).toContain(
      "Resources: cpu 0s user + 0.01s system, peak memory 0.5 MiB, 1 process(es) killed for memory (OOM) (cgroup).",
    );
    expect(r({ ...tiny, cpu_user_seconds: 0.7, cpu_system_seconds: 0.3 })).toContain(
      "Resources: cpu 0.7s user + 0.3s system",
    );
    expect(r({ ...tiny, max_rss_bytes: 100 * 1048576 })).toContain("peak memory 100 MiB");
    expect(r({ ...tiny, max_rss_bytes: 100 * 1048576 - 1 })).not.toContain("Resources");
    expect(r({ ...tiny, gpu_seconds: 3 })).toContain("gpu_seconds: 3 (cgroup)");
    expect(
      r({
        cpu_user_seconds: null,
        cpu_system_seconds: null,
        max_rss_bytes: null,
        oom_kills: null,
        source: null,
      }),
    ).not.toContain("Resources");
  });

  test("a cut tail says how much of the log it shows and how to read the rest", () => {
    const text = finishedText({ ...base, stdout_bytes: 1_000_000, truncated: true });
    expect(text).toContain("stdout (last 16 of 1000000 bytes):");
    expect(text).toContain("get_job_logs reads the whole log");
  });

  test("parsed results and artifacts", () => {
    const text = finishedText({
      ...base,
      state: "succeeded",
      exit_code: 0,
      signal: null,
      reason: null,
      error: null,
      digest: [],
      parsed_results: { accuracy: 0.93, note: null },
      artifacts: [
        {
          path: "out/m.json",
          declared_path: "out/m.json",
          exists: true,
          remote: false,
          size_bytes: 31,
          sha256: "b".repeat(64),
        },
        {
          path: "out/missing.csv",
          declared_path: "out/*.csv",
          exists: false,
          remote: false,
          reason: "no match",
        },
      ],
    });
    expect(text).toStartWith("Job job_X succeeded (exit code 0) after 4m12s.");
    expect(text).toContain('parsed_results: {"accuracy":0.93,"note":null}');
    expect(text).toContain(`- out/m.json: 31 bytes, sha256 ${"b".repeat(64)}`);
    expect(text).toContain("- out/missing.csv (out/*.csv): not found (no match)");
  });
});

describe("the text of a pending answer", () => {
  test("where the job stands, the tails so far, the next call", () => {
    const pending = {
      job_id: "job_P",
      name: "train",
      backend: "ssh",
      host: "gpu1",
      state: "running",
      job_state: "running",
      stdout_tail: "step 10\n",
      stdout_bytes: 8,
      wait_state: "client_timeout",
      delivery_state: "pending",
      waited_seconds: 50,
      status_message: "running 3m, last output 2s ago",
      next_action: 'Call wait_for_job with {"job_id":"job_P"} to keep waiting.',
    };
    const text = pendingText(pending, pendingHead(pending));
    expect(text).toStartWith(
      "Job job_P (train) is running (running 3m, last output 2s ago) on gpu1 (ssh); the wait ended",
    );
    expect(text).toContain("stdout so far (8 bytes):\nstep 10");
    expect(text).toEndWith('Call wait_for_job with {"job_id":"job_P"} to keep waiting.');
  });
});

describe("compact answers", () => {
  test("null, empty, false and 0 are left out (exit_code kept), and a job_state repeating state; nested values and other fields kept", () => {
    const compact = compactAnswer({
      ...base,
      exit_code: 0,
      parsed_results: { note: null, ok: false, n: 0 },
      leftovers: { count: 0, action: "stopped", processes: [], tracking: "cgroup" },
      resources: {
        cpu_user_seconds: 0,
        cpu_system_seconds: 0.01,
        max_rss_bytes: null,
        oom_kills: 0,
        source: "rusage",
      },
      idempotent_replay: false,
      attempt: 1,
    });
    for (const gone of [
      "name",
      "host",
      "artifacts",
      "job_state",
      "stdout_dropped_bytes",
      "stderr_dropped_bytes",
      "truncated",
      "descendants_alive",
      "idempotent_replay",
      "leftovers",
    ])
      expect(compact).not.toHaveProperty(gone);
    expect(compact).toMatchObject({
      exit_code: 0,
      attempt: 1,
      stdout_bytes: 16,
      // user data stays whole: its null, false and 0 are data
      parsed_results: { note: null, ok: false, n: 0 },
      resources: { cpu_system_seconds: 0.01, source: "rusage" },
      // our other nested objects too
      error: { retryable: false },
    });
    expect(compact.resources as object).toEqual({ cpu_system_seconds: 0.01, source: "rusage" });
    expect(compactAnswer({ state: "running", job_state: "stalled" })).toEqual({
      state: "running",
      job_state: "stalled",
    });
    expect(compactAnswer({ state: "failed", exit_code: null, waited_seconds: 0 })).toEqual({
      state: "failed",
    });
    // how long a job was waited on: kept while the wait is pending, left out once it is complete
    expect(compactAnswer({ state: "running", wait_state: "client_timeout", waited_seconds: 50 })).toEqual({
      state: "running",
      wait_state: "client_timeout",
      waited_seconds: 50,
    });
    expect(compactAnswer({ state: "succeeded", wait_state: "complete", waited_seconds: 50 })).toEqual({
      state: "succeeded",
      wait_state: "complete",
    });
  });

  test("leftovers: kept whole when something was left (descendants_alive, derived from it, left out); a result older than leftovers keeps descendants_alive", () => {
    const left = { count: 2, action: "kept", processes: ["1 a", "2 b"], tracking: "environment" };
    expect(compactAnswer({ ...base, descendants_alive: true, leftovers: left })).toMatchObject({
      leftovers: left,
    });
    expect(compactAnswer({ ...base, descendants_alive: true, leftovers: left })).not.toHaveProperty(
      "descendants_alive",
    );
    const nobodyLooked = { count: null, action: null, processes: [], tracking: null };
    expect(compactAnswer({ ...base, leftovers: nobodyLooked })).not.toHaveProperty("leftovers");
    expect(compactAnswer({ ...base, descendants_alive: true })).toMatchObject({ descendants_alive: true });
  });
});
