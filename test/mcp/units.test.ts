// Pure parts of the MCP layer: guards, schema conversion, config, sentences, wire shaping.
import { describe, expect, test } from "bun:test";
import {
  applyMcpEnv,
  holdBudgetFor,
  MAX_PROGRESS_INTERVAL_MS,
  resolveMcpConfig,
} from "../../src/mcp/config.ts";
import { statusSentence } from "../../src/mcp/hold.ts";
import { jobIdFromUri } from "../../src/mcp/job-watch.ts";
import { toJsonSchema } from "../../src/mcp/json-schema.ts";
import { nextWaitAction, QUIET_CANCEL_SECONDS } from "../../src/mcp/results.ts";
import { ttlMsOf } from "../../src/mcp/task-view.ts";
import { strictInput } from "../../src/mcp/tools/args.ts";
import { listInput } from "../../src/mcp/tools/list-jobs.ts";
import { runInput } from "../../src/mcp/tools/run.ts";
import { acknowledgedResourceUris, stripTaskContent } from "../../src/mcp/wire.ts";

describe("tool input JSON Schema", () => {
  test("run: required command, typed optional fields, descriptions", () => {
    const schema = toJsonSchema(strictInput(runInput)) as {
      required: string[];
      properties: Record<string, Record<string, unknown>>;
    };
    expect(schema.required).toEqual(["command"]);
    expect(schema.properties.command).toMatchObject({
      anyOf: [
        { type: "string", minLength: 1 },
        { type: "array", items: { type: "string" }, minItems: 1 },
      ],
    });
    expect(schema.properties.env).toMatchObject({
      type: "object",
      additionalProperties: { type: "string" },
      description: "Extra env vars.",
    });
    expect(schema.properties.backend).toMatchObject({ type: "string", enum: ["local", "ssh", "slurm"] });
  });
  test("list_jobs: integer limit with bounds, state enum includes active/terminal", () => {
    const schema = toJsonSchema(strictInput(listInput)) as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(schema.properties.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 });
    expect(schema.properties.state?.enum).toContain("active");
  });
});

describe("config", () => {
  test("defaults are documented values; progress interval is clamped to 10 s", () => {
    const config = resolveMcpConfig({ progressIntervalMs: 60_000 });
    expect(config.inlineWindowMs).toBe(10_000);
    expect(config.progressIntervalMs).toBe(MAX_PROGRESS_INTERVAL_MS);
  });
  test("env overrides win and bad values name the variable", () => {
    expect(applyMcpEnv(resolveMcpConfig(), { AWAITLESS_MCP_HOLD_BUDGET_MS: "30000" }).holdBudgetMs).toBe(
      30_000,
    );
    expect(() => applyMcpEnv(resolveMcpConfig(), { AWAITLESS_MCP_HOLD_BUDGET_MS: "soon" })).toThrow(
      /AWAITLESS_MCP_HOLD_BUDGET_MS="soon" is not a whole number of milliseconds/,
    );
  });
  test("per-client hold budgets match by client name prefix", () => {
    const config = resolveMcpConfig({ holdBudgetByClientMs: { "claude-code": 240_000 } });
    expect(holdBudgetFor(config, "Claude-Code 2.1")).toBe(240_000);
    expect(holdBudgetFor(config, "some-agent")).toBe(config.holdBudgetMs);
    expect(holdBudgetFor(config, "codex-mcp-client")).toBe(290_000);
  });
});

describe("pending next_action", () => {
  test("offers cancel_job for a stalled job or one silent for 5 minutes, not otherwise", () => {
    expect(nextWaitAction("job_X", "stalled")).toContain('call cancel_job with {"job_id":"job_X"}');
    expect(nextWaitAction("job_X", "running", QUIET_CANCEL_SECONDS)).toContain("no output for 5m00s");
    expect(nextWaitAction("job_X", "running", QUIET_CANCEL_SECONDS - 1)).not.toContain("cancel_job");
    expect(nextWaitAction("job_X", "running")).not.toContain("cancel_job");
  });
});

describe("sentences and shapes", () => {
  const base = {
    job_id: "job_X",
    state: "running" as const,
    elapsed_seconds: 192,
    last_output_at: "2026-01-01T00:00:08.000Z",
    status_message: null,
    created_at: "2026-01-01T00:00:00.000Z",
    finished_at: null,
  };
  test("progress sentence", () => {
    const now = Date.parse("2026-01-01T00:00:10.000Z");
    expect(statusSentence(base as never, now)).toBe("running 3m12s, last output 2s ago");
  });
  test("task TTL grows while working and is fixed after the end", () => {
    const config = resolveMcpConfig({ taskTtlMs: 1_000 });
    expect(ttlMsOf(base as never, config, Date.parse("2026-01-01T00:01:00.000Z"))).toBe(61_000);
    const done = { ...base, finished_at: "2026-01-01T00:00:30.000Z" };
    expect(ttlMsOf(done as never, config, Date.parse("2026-01-01T05:00:00.000Z"))).toBe(31_000);
  });
  test("task handles lose the SDK's empty content; other results keep theirs", () => {
    const handle = {
      jsonrpc: "2.0",
      id: 1,
      result: { resultType: "task", taskId: "t", content: [] },
    } as never;
    expect(stripTaskContent(handle)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { resultType: "task", taskId: "t" },
    } as never);
    const plain = { jsonrpc: "2.0", id: 2, result: { content: [] } } as never;
    expect(stripTaskContent(plain)).toBe(plain);
  });
  test("listen acknowledgements and job URIs", () => {
    const ack = {
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { resourceSubscriptions: ["awaitless://jobs/job_A"] } },
    } as never;
    expect(acknowledgedResourceUris(ack)).toEqual(["awaitless://jobs/job_A"]);
    expect(jobIdFromUri("awaitless://jobs/job_A")).toBe("job_A");
    expect(jobIdFromUri("awaitless://jobs/")).toBeUndefined();
    expect(jobIdFromUri("file:///etc/passwd")).toBeUndefined();
  });
});
