// get_job_status: a job's (or an array's) state now, with what it runs and where, and how to wait for it.
import * as v from "valibot";
import { isTerminal } from "../../core/model/job.ts";
import type { JobStatus } from "../../core/model/service-api.ts";
import { statusSentence } from "../hold.ts";
import { toolResult } from "../results.ts";
import { jobId } from "./args.ts";
import { arraySentence, taskJob } from "./arrays.ts";
import { defineTool, READ_ONLY } from "./define.ts";

export const getJobStatus = defineTool({
  name: "get_job_status",
  description:
    "A job's state now. Use for a quick look. Not for waiting (wait_for_job) or output (get_job_logs).",
  annotations: READ_ONLY,
  input: v.object({ job_id: jobId }),
  async call(env, args) {
    const arrays = env.service.arrays;
    if (arrays?.isArray(args.job_id)) {
      const { task_list: _t, ...a } = await arrays.status(args.job_id);
      return toolResult(
        a,
        `${arraySentence(a)}. Call wait_for_job with {"job_id":"${a.job_id}"} to wait for every task.`,
      );
    }
    const status = await env.service.status(taskJob(env, args.job_id));
    env.finished?.remember(status.job_id, status);
    // the attempt of a retried job, unless its status message already names the one it waits for
    const attempt =
      status.attempts !== undefined && !status.next_attempt_at
        ? `, attempt ${status.attempt} of ${status.attempts}`
        : "";
    const ended = [
      status.exit_code !== null ? `exit ${status.exit_code}` : "",
      status.signal ?? "",
      status.reason !== status.state ? (status.reason ?? "") : "",
    ].filter(Boolean);
    const text = isTerminal(status.state)
      ? `Job ${status.job_id} ${status.state}${ended.length ? ` (${ended.join(", ")})` : ""}${attempt}. wait_for_job returns its full result.`
      : `Job ${status.job_id}: ${statusSentence(status)}${attempt}. Call wait_for_job with {"job_id":"${status.job_id}"} to wait for it.`;
    return toolResult(status, `${text}\n${whatAndWhere(status)}`, { jobId: status.job_id });
  },
});

/** A status's command, directory and target in one line (its text holds what a model needs of the structured one). */
function whatAndWhere(status: JobStatus): string {
  const argv = status.argv;
  const command = argv.length === 3 && argv[0] === "sh" && argv[1] === "-c" ? argv[2]! : argv.join(" ");
  const parts = [`Command: ${status.name ? `${status.name}: ` : ""}${command}`, `cwd ${status.cwd}`];
  if (status.host) parts.push(`on ${status.host} (${status.backend})`);
  if (status.queue) parts.push(`queue ${status.queue}`);
  if (status.after?.length) parts.push(`after ${status.after.join(", ")}`);
  return `${parts.join("; ")}.`;
}
