// list_queues: every named queue with its running and waiting jobs and an ETA.
import * as v from "valibot";
import { formatSeconds, toolResult } from "../results.ts";
import { defineTool, queuesOf, READ_ONLY } from "./define.ts";

export const listQueues = defineTool({
  name: "list_queues",
  description:
    "List queues, their jobs, ETA. Use to see why a job is queued. Not for one job (get_job_status).",
  annotations: READ_ONLY,
  input: v.object({
    host: v.optional(v.pipe(v.string(), v.description("Host filter."))),
  }),
  async call(env, args) {
    const listing = await queuesOf(env).listQueues(args.host);
    const { queues, hidden_array_queues: hidden } = listing;
    // an array's private queue is the array's business: its progress is get_job_status of the array
    const arrays =
      hidden === 0
        ? ""
        : `\n${hidden} job array(s) active; their private queues are not listed (get_job_status with an array's ID shows its tasks).`;
    if (queues.length === 0) {
      return toolResult(listing, `No queues yet. Create one with create_queue.${arrays}`);
    }
    const lines = queues.map((q) => {
      const eta = q.eta_seconds === null ? "" : `, ETA ~${formatSeconds(q.eta_seconds)}`;
      const order = q.waiting.length ? `; waiting: ${q.waiting.map((w) => w.job_id).join(", ")}` : "";
      return `- ${q.name} on ${q.target}: ${q.running}/${q.concurrency} running, ${q.queued} queued${eta}${order}`;
    });
    return toolResult(listing, `${queues.length} queue(s):\n${lines.join("\n")}${arrays}`);
  },
});
