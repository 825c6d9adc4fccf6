// The private queues of job arrays (`array.<ARRAY_ID>`): telling them from named queues, refusing them to queue
// commands and to other jobs (an ended array's queue row is removed by the store: QueueTable.removeEndedArrayQueues).
import { AwaitlessError, hint } from "../model/errors.ts";
import type { JobSpec } from "../model/job.ts";
import { arrayOfQueue } from "../model/queue-names.ts";

/** `queue create` of an `array.*` name: such names belong to arrays (made by --array …%N, removed when it ends). */
export function refuseArrayQueueCreate(name: string): void {
  const arrayId = arrayOfQueue(name);
  if (arrayId === undefined) return;
  throw new AwaitlessError(
    "invalid_argument",
    `queue names starting with "array." are reserved: ${name} is the private queue of job array ${arrayId}, made by --array …%N and removed when the array ends`,
    hint("array_queue_private", { job_id: arrayId }),
    { queue: name },
  );
}

/** A job naming an array's queue that is not one of that array's tasks would take the array's slots: refused. */
export function refuseForeignArrayQueue(spec: Pick<JobSpec, "queue" | "env">): void {
  const arrayId = spec.queue === null ? undefined : arrayOfQueue(spec.queue);
  if (arrayId === undefined || spec.env.AWAITLESS_ARRAY_ID === arrayId) return;
  throw new AwaitlessError(
    "invalid_argument",
    `queue ${spec.queue} is the private queue of job array ${arrayId}: only its tasks run there`,
    hint("array_queue_private", { job_id: arrayId }),
    { queue: spec.queue },
  );
}
