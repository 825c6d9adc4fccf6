// Every MCP tool, in the order tools/list shows them.
import { cancelJob } from "./cancel-job.ts";
import { createQueue } from "./create-queue.ts";
import type { Tool } from "./define.ts";
import { getJobLogs } from "./get-job-logs.ts";
import { getJobStatus } from "./get-job-status.ts";
import { listJobs } from "./list-jobs.ts";
import { listQueues } from "./list-queues.ts";
import { run } from "./run.ts";
import { runJob } from "./run-job.ts";
import { submitJob } from "./submit-job.ts";
import { waitForCompletions } from "./wait-for-completions.ts";
import { waitForJob } from "./wait-for-job.ts";

const ORDER: readonly Tool[] = [
  run,
  submitJob,
  runJob,
  waitForJob,
  waitForCompletions,
  getJobStatus,
  getJobLogs,
  cancelJob,
  createQueue,
  listQueues,
  listJobs,
];

/** The tools by name. */
export const TOOLS: Readonly<Record<string, Tool>> = Object.fromEntries(
  ORDER.map((tool) => [tool.name, tool]),
);

/** The tool of this name; none for any other name, `toString` or `__proto__` included. */
export function toolNamed(name: string): Tool | undefined {
  return Object.hasOwn(TOOLS, name) ? TOOLS[name] : undefined;
}
