// submit_job: start a job (or an array) and answer at once with its ID and how to collect its result.
import * as v from "valibot";
import { nextDetachedAction, retryWaitOf, toolResult } from "../results.ts";
import { launchArray } from "./arrays.ts";
import { defineTool, LAUNCHES } from "./define.ts";
import { launchEntries, launchRequestOf, markShellForm } from "./launch.ts";

export const submitJob = defineTool({
  name: "submit_job",
  description: "Start a background job, get its job_id at once. Use to fan out. Not for a result now (run).",
  annotations: LAUNCHES,
  input: v.object(launchEntries),
  async call(env, args) {
    const req = launchRequestOf(args);
    if (args.array !== undefined) return markShellForm(await launchArray(env, req, args.array, null), args);
    const resp = await env.service.submit(req);
    env.finished?.track(resp.job_id, resp.job);
    env.watch.watch(resp.job_id);
    const next_action = nextDetachedAction(resp.job_id, resp.state, retryWaitOf(resp.job));
    const replay = resp.launch_resumed
      ? " (this request ID created it, but its first client stopped before launching it; launched now)"
      : resp.idempotent_replay
        ? " (idempotent replay: this request ID already created it)"
        : "";
    const result = toolResult(
      { ...resp, next_action },
      `Submitted job ${resp.job_id}, now ${resp.state}${replay}.\n${next_action}`,
      { jobId: resp.job_id },
    );
    return markShellForm(result, args);
  },
});
