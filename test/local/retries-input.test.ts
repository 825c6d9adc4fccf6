// Retries' input through the binary: bad values refused with what to do and nothing created, the policy part of
// the idempotency fingerprint, and a dependency on a parent that may still be retried refused.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const jobCount = () => sb.run(["list", "--json", "--limit", "1000"]).json.jobs.length as number;

describe("retries input", () => {
  test("bad values are refused (exit 2) with a hint, and no job is created", () => {
    const before = jobCount();
    for (const [flags, says] of [
      [["--retries", "two"], "--retries"],
      [["--retries", "101"], "--retries"],
      [["--retries", "2", "--retry-on", "timeout"], "lost, infrastructure, exit"],
      [["--retry-on", "exit"], "retries"],
      [["--retries", "1", "--retry-backoff", "2h"], "backoff"],
    ] as [string[], string][]) {
      const r = sb.run(["submit", "--json", ...flags, "--", "true"]);
      expect({ flags, code: r.code }).toEqual({ flags, code: 2 });
      expect(`${r.json.error.message} ${r.json.error.hint}`).toContain(says);
      expect(r.json.error.hint.length).toBeGreaterThan(0);
    }
    expect(jobCount()).toBe(before);
  });

  test("the policy is part of the request: the same client_request_id with other retries is a conflict", () => {
    const key = `retries-${process.pid}`;
    const a = sb.run(["submit", "--json", "--client-request-id", key, "--retries", "1", "--", "true"]);
    expect(a.code).toBe(0);
    const same = sb.run(["submit", "--json", "--client-request-id", key, "--retries", "1", "--", "true"]);
    expect(same.json.job_id).toBe(a.json.job_id);
    const other = sb.run(["submit", "--json", "--client-request-id", key, "--retries", "2", "--", "true"]);
    expect(other.json.error.code).toBe("idempotency_conflict");
    expect(sb.run(["inspect", "--json", a.json.job_id]).json.spec.retry).toEqual({
      retries: 1,
      on: ["infrastructure"],
      backoff_seconds: 10,
    });
  });

  test("a dependency on an active parent that may be retried is accepted: the child waits for its final attempt", async () => {
    const parent = sb.submit(["sh", "-c", "sleep 1"], ["--retries", "1"]);
    const r = sb.run(["submit", "--json", "--after", parent, "--", "true"]);
    expect(r.code).toBe(0);
    const w = sb.run(["wait", "--json", "--timeout", "30s", r.json.job_id]);
    expect(w.json.state).toBe("succeeded");
    expect(sb.status(parent).state).toBe("succeeded");
  });
});
