// The scenarios every client goes through: what the "model" calls, and what it must have received.
import { existsSync, writeFileSync } from "node:fs";
import { call, type Step, say } from "./script.ts";
import type { ToolResultSeen } from "./types.ts";

/** Our server's settings for the short scenarios (seconds): a 2 s inline window keeps them short. */
export const SHORT_DEFAULTS = { inline_timeout_seconds: 2, progress_interval_seconds: 1 };

/** Markers the jobs print, computed by the shell so that a result echoing the command cannot contain them. */
export const MARK = "hello-from-job-42";

export const LONG_MARK = "slow-check-42";

export const SESSION_PROMPT = "Run the project's checks and report what they found.";

/** What a model would do with one request that asks for several checks, one call after another. */
export function sessionSteps(injects?: { name: string; value: unknown }): Step[] {
  const steps: Step[] = [
    // A job that ends inside the inline window and writes r.json.
    call("run", {
      command: `echo hello-from-job-$((6*7)); echo '{"passed": 3, "failed": 0}' > r.json`,
      artifacts: ["r.json"],
    }),
    // A failing build: the digest must reach the model.
    call("run", {
      command: "echo compiling main.c; echo 'main.c:3:7: error: expected ; before }' >&2; exit 3",
    }),
    // A mistyped argument.
    call("run", { command: "echo never-run", timeout_secs: 30 }),
    // A job longer than the inline window (2 s here), then the wait its pending answer names.
    call("run", {
      command: `echo started; sleep 5; echo slow-check-$((6*7)); echo '{"passed": 7}' > r2.json`,
      artifacts: ["r2.json"],
    }),
    call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
  ];
  // The client's own argument, set as its system prompt tells the model to.
  if (injects) steps.push(call("run", { command: "echo injected-$((6*7))", [injects.name]: injects.value }));
  return steps;
}

/**
 * A wait the client cuts (its timeout 3 s, our hold far longer), then the model waits again until it has the
 * result. The job ends only once the model has read the cut (its next step creates `gate`), so the first wait is
 * cut by the client however slowly a loaded machine runs it; the job's loop is bounded (90 s).
 */
export function cutSteps(gate: string): Step[] {
  const again: Step = (ctx) => {
    if ((ctx.last?.text ?? "").includes(LONG_MARK)) return say("The slow check is done.")(ctx);
    if (!existsSync(gate)) writeFileSync(gate, "");
    return call("wait_for_job", { job_id: ctx.jobId() })(ctx);
  };
  const job =
    `echo started; i=0; while [ ! -e '${gate}' ] && [ $i -lt 900 ]; do sleep 0.1; i=$((i+1)); done; ` +
    "echo slow-check-$((6*7))";
  return [
    call("run", { command: job }),
    call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
    ...Array.from({ length: 6 }, () => again),
  ];
}

/** A quick success, as small as a result gets: `echo`. */
export function modernSteps(): Step[] {
  return [call("run", { command: "echo hello-from-job-$((6*7))" })];
}

/** The results of our tools (the clients' tool searches left out; Qwen Code's tool_call bridge kept). */
export function ours(results: ToolResultSeen[]): ToolResultSeen[] {
  return results.filter((r) => !/^(ToolSearch|tool_search)$/.test(r.name));
}

export function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
