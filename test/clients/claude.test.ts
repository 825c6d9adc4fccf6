// Claude Code against our MCP server: what its model received, through the real CLI.
import { afterEach, describe, expect, test } from "bun:test";
import { claude } from "./harness/clients/claude.ts";
import { type ClientRun, runClient } from "./harness/run-client.ts";
import { MARK, ours, quick, SHORT_DEFAULTS } from "./harness/scenarios.ts";

const runs: ClientRun[] = [];
afterEach(() => {
  for (const r of runs.splice(0)) r.dispose();
});

describe("Claude Code", () => {
  test("quick job: the model reads state, exit code, output and the parsed r.json", async () => {
    const run = await runClient(claude, { ...quick, defaults: SHORT_DEFAULTS, timeoutMs: 90_000 });
    runs.push(run);
    console.log(run.exitCode, run.stderr.slice(-2000));
    for (const r of run.results) console.log(r.name, r.bytes, r.text.slice(0, 2000));
    const [result] = ours(run.results);
    expect(result?.text).toContain(MARK);
  }, 120_000);
});
