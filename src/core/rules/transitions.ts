// Allowed state transitions (docs/protocol.md, "Lifecycle"), pure.
import { isTerminal, type JobState } from "../model/job.ts";

const ORDER: Record<JobState, number> = {
  queued: 0,
  starting: 1,
  running: 2,
  stalled: 2,
  succeeded: 3,
  failed: 3,
  cancelled: 3,
  timed_out: 3,
  lost: 3,
};

/** Transitions only move forward; running ⇄ stalled is the one way back; terminal is immutable. */
export function canTransition(from: JobState, to: JobState): boolean {
  if (from === to) return false;
  if (isTerminal(from)) return false;
  if ((from === "running" && to === "stalled") || (from === "stalled" && to === "running")) return true;
  return ORDER[to] > ORDER[from];
}
