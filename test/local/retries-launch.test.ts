// A launch that fails is an infrastructure fault: with --retries the submit answers the job queued for its next
// attempt (exit 0) instead of failing it, and the attempt launched after the backoff runs the command.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

test("a failed launch (an untrusted jobs/ directory) is retried once the cause is gone", async () => {
  sb.run(["list"]);
  const jobs = join(sb.dataDir, "jobs");
  mkdirSync(jobs, { recursive: true });
  chmodSync(jobs, 0o777);
  const r = sb.run(["submit", "--json", "--retries", "1", "--retry-backoff", "1s", "--", "echo", "hi"]);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ state: "queued", job: { attempt: 2, attempts: 2 } });
  expect(r.json.job.status_message).toMatch(
    /^waiting for attempt 2 of 2 (in about \d+s|now); attempt 1 failed \(launch_failed\)$/,
  );
  chmodSync(jobs, 0o700);
  const w = await sb.runAsync(["wait", "--json", r.json.job_id]);
  expect(w.json).toMatchObject({ state: "succeeded", attempt: 2, attempts: 2, stdout_tail: "hi\n" });
  const h = sb.run(["inspect", "--json", r.json.job_id]).json.attempt_history;
  expect(h.map((a: { state: string; reason: string }) => [a.state, a.reason])).toEqual([
    ["failed", "launch_failed"],
  ]);
  expect(h[0].result.error.stage).toBe("launch_failed");
  // gc removes the job with every attempt's directory (attempt 2's lives under the first one's)
  const dir = sb.run(["inspect", "--json", r.json.job_id]).json.job_dir as string;
  expect(dir).toEndWith(`${r.json.job_id}/attempts/2`);
  expect(existsSync(dir)).toBe(true);
  expect(sb.run(["gc", "--older-than", "0", "--json"]).json.removed).toContain(r.json.job_id);
  expect(existsSync(join(jobs, r.json.job_id))).toBe(false);
});

test("without --retries the same failed launch fails the job at once (state failed, launch_failed)", () => {
  const jobs = join(sb.dataDir, "jobs");
  chmodSync(jobs, 0o777);
  const r = sb.run(["submit", "--json", "--", "echo", "hi"]);
  chmodSync(jobs, 0o700);
  expect(r.code).not.toBe(0);
  const last = sb.run(["list", "--json"]).json.jobs[0];
  expect([last.state, last.reason]).toEqual(["failed", "launch_failed"]);
});
