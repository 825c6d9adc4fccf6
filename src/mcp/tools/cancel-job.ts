// cancel_job: stop a job (or every task of an array): SIGTERM, then SIGKILL after the grace period.
import * as v from "valibot";
import { toolResult } from "../results.ts";
import { jobId, seconds } from "./args.ts";
import { arraySentence, taskJob } from "./arrays.ts";
import { defineTool } from "./define.ts";

export const cancelJob = defineTool({
  name: "cancel_job",
  description: "Stop a job (SIGTERM, then SIGKILL). Use when wrong or unneeded. Not needed to stop waiting.",
  annotations: { idempotentHint: true, openWorldHint: false },
  input: v.object({
    job_id: jobId,
    grace_period_seconds: v.optional(
      v.pipe(seconds("grace_period_seconds"), v.description("TERM→KILL delay.")),
    ),
  }),
  async call(env, args) {
    const arrays = env.service.arrays;
    if (arrays?.isArray(args.job_id)) {
      const r = await arrays.cancel(args.job_id, args.grace_period_seconds);
      return toolResult(
        r,
        `${arraySentence(r.array)}; ${r.cancel_requested} task(s) cancelled, ${r.already_terminal} had already ended.`,
      );
    }
    const resp = await env.service.cancel(taskJob(env, args.job_id), args.grace_period_seconds);
    const text =
      resp.leftover && resp.leftover.action !== "none"
        ? `Job ${resp.job_id} is ${resp.job_state} (its wrapper was killed); its command's process group: ${resp.leftover.action}: ${resp.leftover.detail}.`
        : resp.already_terminal
          ? `Job ${resp.job_id} had already finished (${resp.job_state}); nothing was signalled.`
          : `Cancellation of job ${resp.job_id} requested (now ${resp.job_state}). wait_for_job returns once it has stopped.`;
    return toolResult(resp, text, { jobId: resp.job_id });
  },
});
