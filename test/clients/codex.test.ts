// Codex against our MCP server: what its model received, through the real CLI.
import { afterEach, describe, expect, test } from "bun:test";
import { codex } from "./harness/clients/codex.ts";
import { type ClientRun, runClient } from "./harness/run-client.ts";
import { MARK, ours, quick, SHORT_DEFAULTS } from "./harness/scenarios.ts";

const runs: ClientRun[] = [];
afterEach(() => {
  for (const r of runs.splice(0)) r.dispose();
});

describe("Codex", () => {
  test("quick job", async () => {
    const run = await runClient(codex, { ...quick, defaults: SHORT_DEFAULTS, timeoutMs: 90_000 });
    runs.push(run);
    console.log(run.exitCode, run.stdout.slice(-3000), run.stderr.slice(-3000));
    for (const r of run.model.records)
      console.log(r.method, r.path, r.error, r.turn?.tools.map((t) => t.name).join(","));
    for (const r of run.results) console.log(r.name, r.bytes, r.text.slice(0, 3000));
    const [result] = ours(run.results);
    expect(result?.text).toContain(MARK);
  }, 120_000);
});
