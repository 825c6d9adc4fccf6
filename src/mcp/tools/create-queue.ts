// create_queue: a FIFO queue of N slots that launches name with `queue`.
import * as v from "valibot";
import { toolResult } from "../results.ts";
import { count } from "./args.ts";
import { defineTool, queuesOf } from "./define.ts";

export const createQueue = defineTool({
  name: "create_queue",
  description: "Create a FIFO queue of N slots. Use so jobs with queue: NAME wait for a slot. Not for Slurm.",
  annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: v.object({
    name: v.pipe(v.string("name must be a string"), v.description("1–64 of A-Z a-z 0-9 . _ -")),
    concurrency: v.pipe(count("concurrency", 10_000), v.description("Run at once.")),
    host: v.optional(v.pipe(v.string(), v.description("Default: local."))),
  }),
  async call(env, args) {
    const q = await queuesOf(env).createQueue(args.name, args.concurrency, args.host);
    const text = `${q.created ? "Created" : "Queue already exists:"} ${q.name} on ${q.target}, concurrency ${q.concurrency}. Launch into it with queue: "${q.name}".`;
    return toolResult(q, text);
  },
});
