// wait_for_job: hold until a job (or every task of an array) ends, or the wait's own timeout / the hold budget.
import * as v from "valibot";
import { holdTimeoutMs } from "../hold.ts";
import { jobId, seconds } from "./args.ts";
import { taskJob, waitArray } from "./arrays.ts";
import { defineTool, READ_ONLY } from "./define.ts";
import { holdForJob } from "./held-wait.ts";

export const waitForJob = defineTool({
  name: "wait_for_job",
  description:
    "Wait for a job's result. Use after run detaches or submit_job; on client_timeout call it " +
    "again. Not for several jobs (wait_for_completions). Never sleep or poll.",
  annotations: READ_ONLY,
  input: v.object({
    job_id: jobId,
    timeout_seconds: v.optional(v.pipe(seconds("timeout_seconds"), v.description("Longest wait (≤ hold)."))),
  }),
  async call(env, args, ctx) {
    if (env.service.arrays?.isArray(args.job_id))
      return waitArray(env, args.job_id, holdTimeoutMs(args.timeout_seconds, ctx.hold.budgetMs), ctx);
    return holdForJob(env, taskJob(env, args.job_id), args.timeout_seconds, ctx, false);
  },
});
