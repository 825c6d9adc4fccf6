// wait_for_completions: hold until any of several jobs ends; each completion once, after a cursor.
import * as v from "valibot";
import { compactAnswer } from "../compact.ts";
import { holdTimeoutMs, holdWithTicker } from "../hold.ts";
import { finishedText } from "../result-text.ts";
import { toolResult } from "../results.ts";
import { count, seconds } from "./args.ts";
import { defineTool, READ_ONLY } from "./define.ts";

export const waitForCompletions = defineTool({
  name: "wait_for_completions",
  description:
    "Wait until any of several jobs finishes; pass next_cursor as after_cursor. Use after submit_job. Not " +
    "for one job (wait_for_job).",
  annotations: READ_ONLY,
  input: v.object({
    job_ids: v.pipe(
      v.array(v.string(), "job_ids must be an array of job IDs"),
      v.minLength(1, "job_ids needs at least one job ID"),
      v.maxLength(500, "job_ids takes at most 500 job IDs"),
      v.description("Job IDs."),
    ),
    after_cursor: v.optional(v.pipe(v.string(), v.description("The last next_cursor."))),
    timeout_seconds: v.optional(v.pipe(seconds("timeout_seconds"), v.description("Longest wait."))),
    limit: v.optional(v.pipe(count("limit", 500), v.description("Default 50."))),
  }),
  async call(env, args, ctx) {
    const timeoutMs = holdTimeoutMs(args.timeout_seconds, ctx.hold.budgetMs);
    // an array's ID stands for its tasks
    const ids = env.service.arrays ? env.service.arrays.expandAll(args.job_ids, 500) : args.job_ids;
    const resp = await holdWithTicker(
      ctx.hold,
      async () => `waiting for ${ids.length} job(s)`,
      (hooks) =>
        env.service.completions(ids, {
          ...(args.after_cursor !== undefined && { after_cursor: args.after_cursor }),
          ...(args.limit !== undefined && { limit: args.limit }),
          timeoutMs,
          ...hooks,
        }),
    );
    for (const id of ids) env.finished?.track(id);
    for (const c of resp.completions) env.finished?.delivered(c.job_id);
    for (const id of resp.active_job_ids) env.watch.watch(id);
    const lines = resp.completions.map((c) => finishedText(c.result));
    const next = `Call wait_for_completions with {"job_ids":${JSON.stringify(args.job_ids)},"after_cursor":"${resp.next_cursor}"} for the next ones.`;
    const head =
      resp.completions.length === 0
        ? `No job finished ${resp.wait_timed_out ? "before the wait ended (only the wait ended: no job was killed)" : "yet"}; ${resp.active_job_ids.length} still active.`
        : `${resp.completions.length} job(s) finished:\n\n${lines.join("\n\n")}\n`;
    const tail =
      resp.active_job_ids.length > 0 || resp.has_more ? `\n${next}` : "\nAll selected jobs have finished.";
    const unreachable =
      resp.unreachable_job_ids.length > 0
        ? `\nUnreachable right now: ${resp.unreachable_job_ids.join(", ")}.`
        : "";
    // Each completion's result is compact, as every wait-like result over MCP.
    const compact = {
      ...resp,
      completions: resp.completions.map((c) => ({ ...c, result: compactAnswer(c.result) })),
    };
    const structured =
      resp.active_job_ids.length > 0 || resp.has_more ? { ...compact, next_action: next } : compact;
    return toolResult(structured, head + unreachable + tail);
  },
});
