// The scenarios each real client goes through, asserting on what its model received (the request bodies the
// client sent the scripted model), not on our side of the wire.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gateOnAvailability } from "../../helpers/sshd.ts";
import { clientAvailable } from "./available.ts";
import { calls } from "./facts.ts";
import { type ClientRun, type ClientSpec, runClient } from "./run-client.ts";
import {
  cutSteps,
  LONG_MARK,
  MARK,
  modernSteps,
  occurrences,
  ours,
  SESSION_PROMPT,
  SHORT_DEFAULTS,
  sessionSteps,
} from "./scenarios.ts";
import type { ToolResultSeen } from "./types.ts";

export interface ClientFeatures {
  /** The executable in test/clients/node_modules/.bin. */
  bin: string;
  /** An argument the client adds to every tool's schema, and the value its model is told to set. */
  injects?: { name: string; value: unknown };
  /** The client has a per-server tool-call timeout the scenario can set below our hold. */
  cut?: boolean;
  /**
   * The client has a 2026-07-28 mode: the cut scenario runs in it, after a quick success that must reach the model
   * whole within `quickBytes` (what its model reads of it, the client's wrapping included; measured + a margin).
   */
  modern?: { quickBytes: number };
}

/** "exit code 0" however a result spells it (JSON field or sentence). */
export function exitCodeIs(text: string, code: number): boolean {
  return new RegExp(`"exit_code"\\s*:\\s*${code}\\b|exit(ed)?( with)?( code)?[ :=]+${code}\\b`, "i").test(
    text,
  );
}

function describeResults(results: ToolResultSeen[]): string {
  return results.map((r, i) => `#${i} ${r.name} (${r.bytes} B): ${r.text.slice(0, 600)}`).join("\n");
}

/** What happened in a run, for a failure message: the model's requests, the MCP traffic, the client's output. */
export function explain(run: ClientRun): string {
  const t0 = run.mcp[0]?.at ?? 0;
  const requests = run.model.records.map(
    (r) =>
      `  ${r.method} ${r.path} tools=${r.turn?.tools.length ?? "-"} results=${r.turn?.results.length ?? "-"} → ${r.error ?? JSON.stringify(r.reply)?.slice(0, 120)}`,
  );
  const mcp = run.mcp
    .filter((t) => t.dir !== "out" || !t.line.includes("notifications/progress"))
    .slice(-20)
    .map((t) => `  +${((t.at - t0) / 1000).toFixed(1)}s ${t.dir} ${t.line.slice(0, 160)}`);
  return [
    `${run.client.label}: exit ${run.exitCode}${run.timedOut ? " (timed out, stopped)" : ""} after ${run.durationMs} ms`,
    `model requests:\n${requests.join("\n")}`,
    `MCP (last 20):\n${mcp.join("\n")}`,
    `results:\n${describeResults(ours(run.results))}`,
    `stdout (end):\n${run.stdout.slice(-1500)}`,
    `stderr (end):\n${run.stderr.slice(-1500)}`,
  ].join("\n");
}

export function clientSuite(client: ClientSpec, features: ClientFeatures): void {
  if (!gateOnAvailability(`${client.label} (real client)`, clientAvailable(features.bin))) return;

  describe(`${client.label}: one session (quick, failing, mistyped, long + wait_for_job)`, () => {
    let run: ClientRun;
    let results: ToolResultSeen[] = [];
    const at = (i: number): ToolResultSeen => {
      const r = results[i];
      if (r === undefined)
        throw new Error(
          `the model received ${results.length} results of ours, not ${i + 1}:\n${explain(run)}`,
        );
      return r;
    };
    beforeAll(async () => {
      run = await runClient(client, {
        prompt: SESSION_PROMPT,
        steps: sessionSteps(features.injects),
        defaults: SHORT_DEFAULTS,
        timeoutMs: 150_000,
      });
      results = ours(run.results);
    }, 180_000);
    afterAll(() => run?.dispose());

    test("the client ran to the end in its namespace", () => {
      expect(run.timedOut, explain(run)).toBe(false);
      expect(run.model.records.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
    });

    test("quick job: the model reads state, exit code, output tail and the parsed r.json, once", () => {
      const { text } = at(0);
      expect(text).toContain("succeeded");
      expect(exitCodeIs(text, 0)).toBe(true);
      expect(text).toContain(MARK);
      expect(text).toMatch(/"passed"\s*:\s*3/);
      expect(occurrences(text, MARK)).toBe(1);
    });

    test("failing job: the model reads the failure, its exit code and the digest line", () => {
      const { text } = at(1);
      expect(text).toContain("failed");
      expect(exitCodeIs(text, 3)).toBe(true);
      expect(text).toContain("expected ; before }");
    });

    test("mistyped argument: refused, the argument named in what the model reads, nothing run", () => {
      const { text } = at(2);
      expect(text).toContain("timeout_secs");
      const list = run.awaitless(["list", "--limit", "100"]) as { jobs: Array<{ argv?: string[] }> };
      expect(list.jobs.some((j) => JSON.stringify(j).includes("timeout_secs"))).toBe(false);
    });

    test("job longer than the inline window: the pending answer names wait_for_job and the job", () => {
      const { text } = at(3);
      expect(text).toContain("wait_for_job");
      expect(text).toMatch(/job_[0-9A-Z]{26}/);
      expect(text).not.toContain(LONG_MARK);
    });

    test("wait_for_job: the final result reaches the model", () => {
      const { text } = at(4);
      expect(text).toContain("succeeded");
      expect(text).toContain(LONG_MARK);
      expect(text).toMatch(/"passed"\s*:\s*7/);
    });

    if (features.injects) {
      const arg = features.injects.name;
      test(`the client's own argument (${arg}) is not the model's mistake: the call runs`, () => {
        const { text } = at(5);
        expect(text).not.toContain(arg);
        expect(text).toContain("injected-42");
        expect(text).toContain("succeeded");
      });
    }
  });

  if (features.cut) {
    const modern = features.modern;
    // In its 2026-07-28 mode the session opens with a quick success (that scenario, without a session of its own).
    const first = modern ? 1 : 0;
    describe(`${client.label}: a call the client cuts (its timeout below our hold), then the next wait${modern ? "; in its 2026-07-28 mode, after a quick success" : ""}`, () => {
      let run: ClientRun;
      let results: ToolResultSeen[] = [];
      const gateDir = mkdtempSync(join(tmpdir(), "awl-gate-"));
      beforeAll(async () => {
        run = await runClient(client, {
          prompt: SESSION_PROMPT,
          steps: [...(modern ? modernSteps() : []), ...cutSteps(join(gateDir, "gate"))],
          // Progress every 10 s: opencode restarts its timeout on each progress notification.
          defaults: { ...SHORT_DEFAULTS, progress_interval_seconds: 10 },
          clientTimeoutSeconds: 3,
          modern: modern !== undefined,
          timeoutMs: 150_000,
        });
        results = ours(run.results);
      }, 180_000);
      afterAll(() => {
        run?.dispose();
        rmSync(gateDir, { recursive: true, force: true });
      });

      if (modern)
        test(`its 2026-07-28 mode: a quick success reaches the model whole, in at most ${modern.quickBytes} bytes`, () => {
          const r = results[0];
          expect(r, explain(run)).toBeDefined();
          expect(r!.text).toContain(MARK);
          expect(r!.text).toContain("succeeded");
          expect(exitCodeIs(r!.text, 0)).toBe(true);
          console.log(
            `${client.label}, 2026-07-28 mode: a quick success is ${Buffer.byteLength(r!.text)} B as its model reads it (${r!.bytes} B with the client's result block); opened with ${run.mcp.find((t) => t.dir === "in" && t.msg?.method)?.msg.method}`,
          );
          expect(Buffer.byteLength(r!.text)).toBeLessThanOrEqual(modern.quickBytes);
        });

      test("the cut wait reaches the model as the client's timeout, the next wait gets the result", () => {
        expect(results.length, explain(run)).toBeGreaterThanOrEqual(first + 3);
        expect(results[first + 1]!.text).not.toContain(LONG_MARK);
        // Our hold is 110 s or more and the job waits for the model to read the cut: only the client ends the
        // first wait, and it says so to us.
        const firstWait = calls(run.mcp).find((c) => c.tool === "wait_for_job");
        expect(firstWait?.cancelledAt, explain(run)).toBeDefined();
        expect(results.at(-1)!.text).toContain(LONG_MARK);
        expect(results.at(-1)!.text).toContain("succeeded");
      });

      test("the job kept running through the cut (a wait never affects the job)", () => {
        const list = run.awaitless(["list", "--limit", "10"]) as { jobs: Array<{ state: string }> };
        expect(list.jobs.map((j) => j.state)).toEqual(modern ? ["succeeded", "succeeded"] : ["succeeded"]);
      });
    });
  }
}
