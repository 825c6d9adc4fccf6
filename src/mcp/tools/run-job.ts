// run_job: a command as an MCP Task (taskId = job_id) for a Tasks client, else a blocking hold to its result.
import * as v from "valibot";
import { taskView } from "../task-view.ts";
import { launchArray } from "./arrays.ts";
import { defineTool, LAUNCHES } from "./define.ts";
import { holdForJob } from "./held-wait.ts";
import { launchEntries, launchRequestOf, markShellForm } from "./launch.ts";

export const runJob = defineTool({
  name: "run_job",
  description:
    "Run a command as an MCP Task (taskId = job_id). Use if your client has MCP Tasks; not for others (run).",
  annotations: LAUNCHES,
  input: v.object({
    ...launchEntries,
    client_request_id: v.pipe(
      v.string('run_job needs client_request_id: a key you reuse when retrying, e.g. "tests-after-fix-1"'),
      v.minLength(1, "client_request_id must not be empty"),
      v.description("Same key, same task."),
    ),
  }),
  /** A task handle once the job row is committed (Tasks clients), else a blocking hold. */
  async call(env, args, ctx) {
    const req = launchRequestOf(args);
    if (args.array !== undefined)
      return markShellForm(await launchArray(env, req, args.array, ctx.hold.budgetMs, ctx), args);
    const submitted = await env.service.submit(req);
    env.finished?.track(submitted.job_id, submitted.job);
    env.watch.watch(submitted.job_id);
    if (ctx.tasks) return { kind: "task", task: taskView(submitted.job, env.config) };
    return markShellForm(await holdForJob(env, submitted.job_id, undefined, ctx, true), args);
  },
});
