// run: launch a command and hold for its result up to the inline window; a job still going answers detached.
import * as v from "valibot";
import { isDelivered } from "../../core/model/service-api.ts";
import { holdWithProgress } from "../hold.ts";
import { answerText, pendingText } from "../result-text.ts";
import {
  answerResult,
  formatSeconds,
  isFailure,
  mcpWait,
  nextDetachedAction,
  retryWaitOf,
} from "../results.ts";
import { seconds } from "./args.ts";
import { launchArray } from "./arrays.ts";
import { defineTool, LAUNCHES } from "./define.ts";
import { launchEntries, launchRequestOf, markShellForm } from "./launch.ts";

export const runInput = v.object({
  ...launchEntries,
  inline_timeout_seconds: v.optional(
    v.pipe(seconds("inline_timeout_seconds"), v.description("Detach after (10 s).")),
  ),
});

export const run = defineTool({
  name: "run",
  description:
    "Run a command, get its result: the default for any command of unknown duration. Done " +
    'within inline_timeout_seconds: exit code, tails, digest; else delivery "detached": then call wait_for_job, ' +
    "never sleep or poll. Not for interactive commands, a started job, many jobs (submit_job).",
  annotations: LAUNCHES,
  input: runInput,
  async call(env, args, ctx) {
    const req = launchRequestOf(args);
    const requestedMs = (args.inline_timeout_seconds ?? env.config.inlineWindowMs / 1000) * 1000;
    const inlineMs = Math.min(requestedMs, ctx.hold.budgetMs);
    if (args.array !== undefined)
      return markShellForm(await launchArray(env, req, args.array, inlineMs, ctx), args);
    const resp = await holdWithProgress(ctx.hold, (hooks) => env.service.run(req, inlineMs, hooks));
    env.finished?.track(resp.job_id, req);
    if (isDelivered(resp)) env.finished?.delivered(resp.job_id);
    env.watch.watch(resp.job_id);
    const out = mcpWait(resp);
    if (out.delivery === "detached") {
      const retry = retryWaitOf(out);
      out.next_action = nextDetachedAction(out.job_id, out.job_state, retry);
      const why = retry
        ? `is ${retry}`
        : out.detach_reason === "queued"
          ? "is queued"
          : env.ending?.aborted
            ? "is still running (the client's input ended, so the call answered at once)"
            : `is still running after ${formatSeconds(inlineMs / 1000)}`;
      const now = !retry && out.status_message ? ` (now ${out.status_message})` : "";
      const head = `Job ${out.job_id} ${why}${now}; it keeps going in the background.`;
      return markShellForm(answerResult(out, pendingText(out, head), { jobId: out.job_id }), args);
    }
    // The whole result is here: no link to follow (only answers still waiting on the job carry one).
    return markShellForm(answerResult(out, answerText(out), { isError: isFailure(out) }), args);
  },
});
