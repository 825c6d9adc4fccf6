// The states a listing's `state` filter stands for (list, the dashboard's jobs and arrays).
import { invalid } from "./errors.ts";
import { isTerminal, JOB_STATES, type JobState, TERMINAL_STATES } from "./job.ts";

/** The states a listing's `state` stands for (undefined: every state); an unknown one is refused. */
export function listStates(
  state: JobState | "active" | "terminal" | "pending" | undefined,
): readonly JobState[] | undefined {
  // `pending` is Awaitless 0.8's word for a job waiting on Slurm or a queue: our `queued`
  if (state === "pending") return ["queued"];
  if (state === "active") return JOB_STATES.filter((s) => !isTerminal(s));
  if (state === "terminal") return TERMINAL_STATES;
  if (state === undefined) return undefined;
  if (!JOB_STATES.includes(state)) {
    throw invalid(
      `unknown state ${JSON.stringify(state)}`,
      `use one of ${JOB_STATES.join(", ")}, active, terminal (pending is read as queued)`,
    );
  }
  return [state];
}
