// The scenarios every client goes through: what the "model" calls, and what it must have received.
import { call, type Step } from "./script.ts";
import type { ToolResultSeen } from "./types.ts";

/** Our server's settings for the short scenarios (seconds): a 2 s inline window keeps them short. */
export const SHORT_DEFAULTS = { inline_timeout_seconds: 2, progress_interval_seconds: 1 };

export const MARK = "hello-from-job";

export interface Scenario {
  name: string;
  prompt: string;
  steps: Step[];
}

/** A job that ends inside the inline window and writes r.json. */
export const quick: Scenario = {
  name: "quick job",
  prompt: "Run the quick check and tell me what it found.",
  steps: [
    call("run", {
      command: `echo ${MARK}; echo '{"passed": 3, "failed": 0}' > r.json`,
      artifacts: ["r.json"],
    }),
  ],
};

/** A job longer than the inline window: `run` detaches, the model waits with what the pending answer names. */
export function long(seconds: number): Scenario {
  return {
    name: `job of ${seconds}s (longer than the inline window)`,
    prompt: "Run the slow check and wait for its result.",
    steps: [
      call("run", {
        command: `echo started; sleep ${seconds}; echo ${MARK}; echo '{"passed": 7}' > r.json`,
        artifacts: ["r.json"],
      }),
      call("wait_for_job", (ctx) => ({ job_id: ctx.jobId() })),
    ],
  };
}

export const failing: Scenario = {
  name: "failing job",
  prompt: "Build the project.",
  steps: [
    call("run", {
      command: "echo compiling main.c; echo 'main.c:3:7: error: expected ; before }' >&2; exit 3",
    }),
  ],
};

export const mistyped: Scenario = {
  name: "mistyped argument",
  prompt: "Run echo with a timeout.",
  steps: [call("run", { command: `echo ${MARK}`, timeout_secs: 30 })],
};

/** The results of our tools (the clients' tool searches left out; Qwen Code's tool_call bridge kept). */
export function ours(results: ToolResultSeen[]): ToolResultSeen[] {
  return results.filter((r) => !/^(ToolSearch|tool_search)$/.test(r.name));
}

export function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}
