// get_job_logs: a page of a job's whole stdout/stderr (grep, head, tail, line ranges), within the answer's budget.
import * as v from "valibot";
import { logsText } from "../logs-text.ts";
import { toolResult } from "../results.ts";
import { count, jobId } from "./args.ts";
import { taskJob } from "./arrays.ts";
import { defineTool, READ_ONLY } from "./define.ts";

const lineNumber = (what: string) =>
  v.pipe(
    v.number(`${what} must be a line number`),
    v.integer(`${what} must be a whole line number`),
    v.minValue(1, `${what} must be ≥ 1 (lines count from 1)`),
  );

export const getJobLogs = defineTool({
  name: "get_job_logs",
  description:
    "Read a job's whole stdout/stderr: grep, head, tail, line ranges, next_from_line cursors. Use past " +
    "a result's tails. Not for waiting.",
  annotations: READ_ONLY,
  input: v.object({
    job_id: jobId,
    stream: v.optional(
      v.pipe(
        v.picklist(["stdout", "stderr", "both"], "stream must be stdout, stderr or both"),
        v.description("Default both."),
      ),
    ),
    tail_lines: v.optional(v.pipe(count("tail_lines", 100_000), v.description("Last N lines/matches."))),
    head: v.optional(v.pipe(count("head", 100_000), v.description("First N lines/matches."))),
    from_line: v.optional(v.pipe(lineNumber("from_line"), v.description("First line (1-based)."))),
    to_line: v.optional(v.pipe(lineNumber("to_line"), v.description("Last line to read."))),
    grep: v.optional(v.pipe(v.string(), v.description("grep -E over the whole log."))),
    max_bytes: v.optional(v.pipe(count("max_bytes", 1_048_576), v.description("Byte budget."))),
  }),
  async call(env, args) {
    const maxBytes = env.config.maxReturnBytes;
    const req = { ...args, max_bytes: Math.min(args.max_bytes ?? maxBytes, maxBytes) };
    const resp = await env.service.logs({ ...req, job_id: taskJob(env, req.job_id) });
    return toolResult(resp, logsText(req, resp), { jobId: args.job_id });
  },
});
