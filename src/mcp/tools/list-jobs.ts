// list_jobs: the newest jobs (filtered), one bounded line each, with arrays' progress.
import * as v from "valibot";
import { progressWords } from "../../core/model/array-views.ts";
import { JOB_STATES } from "../../core/model/job.ts";
import type { JobStatus } from "../../core/model/service-api.ts";
import { boundList, leftOutNote, quotedFilter } from "../list-bounds.ts";
import { formatSeconds, toolResult } from "../results.ts";
import { count } from "./args.ts";
import { defineTool, READ_ONLY } from "./define.ts";

const listStates = [...JOB_STATES, "active", "terminal", "pending"] as const;

export const listInput = v.object({
  state: v.optional(
    v.pipe(
      v.picklist(listStates, `state must be one of: ${listStates.join(", ")}`),
      v.description("State, active or terminal."),
    ),
  ),
  host: v.optional(v.pipe(v.string(), v.description("Host filter."))),
  queue: v.optional(v.pipe(v.string(), v.description("Queue filter."))),
  name: v.optional(v.pipe(v.string(), v.description("Name filter."))),
  limit: v.optional(v.pipe(count("limit", 1_000), v.description("Default 20."))),
});

export const listJobs = defineTool({
  name: "list_jobs",
  description: "List recent jobs. Use to find a lost job ID. Not for one known job (get_job_status).",
  annotations: READ_ONLY,
  input: listInput,
  async call(env, args) {
    const jobs = await env.service.list(args);
    if (jobs.length === 0) {
      const filters = Object.entries(args)
        .filter(([, value]) => value !== undefined)
        .map(([key, value]) => `${key}=${quotedFilter(value)}`)
        .join(", ");
      return toolResult(
        { jobs: [], count: 0 },
        `No jobs match${filters ? ` (${filters})` : ""}. Start one with run or submit_job.`,
      );
    }
    const arrayApi = env.service.arrays;
    const shown = arrayApi ? arrayApi.annotate(jobs) : jobs;
    const arrays = arrayApi ? arrayApi.progress(jobs.map((j) => j.job_id)) : [];
    // bounded (list-bounds.ts): each row's command and texts cut, rows past the answer's budget left out, both said
    const list = boundList(
      shown,
      (job) =>
        `${job.job_id}  ${job.state.padEnd(9)}  ${(job.elapsed_seconds === undefined ? "-" : formatSeconds(job.elapsed_seconds)).padStart(6)}  ${job.name ?? job.argv.join(" ").slice(0, 60)}${listNote(job)}`,
    );
    const leftOut = leftOutNote(list);
    const progress = arrays.map((a) => `Array ${a.job_id} (${a.array}) ${a.state}: ${progressWords(a)}`);
    const note = leftOut
      ? [
          `(${list.leftOut > 0 ? `${list.leftOut} older job(s) left out` : ""}${list.leftOut > 0 && list.cutRows > 0 ? "; " : ""}${list.cutRows > 0 ? `${list.cutRows} row(s) cut` : ""}: ${leftOut.why}. ${leftOut.next}.)`,
        ]
      : [];
    return toolResult(
      {
        jobs: list.rows,
        count: list.rows.length,
        ...(arrays.length > 0 ? { arrays } : {}),
        ...(leftOut ? { left_out: leftOut } : {}),
      },
      `${list.rows.length} job(s):\n${[...list.lines, ...progress, ...note].join("\n")}`,
    );
  },
});

/** What a listed job's line adds: its array task, its attempt, what a held or retrying job waits for. */
function listNote(job: JobStatus & { array_task?: string }): string {
  const notes = [
    ...(job.array_task ? [`task ${job.array_task}`] : []),
    ...(job.attempts !== undefined ? [`attempt ${job.attempt} of ${job.attempts}`] : []),
    ...(job.state === "queued" && (job.after || job.next_attempt_at) && job.status_message
      ? [job.status_message]
      : []),
  ];
  return notes.length > 0 ? `  [${notes.join("; ")}]` : "";
}
