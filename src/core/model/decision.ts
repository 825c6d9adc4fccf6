// What the reconcile rules decide about a job (src/core/rules/reconcile.ts), and the ErrorInfo they word. Pure.
import type { ErrorInfo, JobState, Leftovers, Resources, TerminalState } from "./job.ts";

export type Decision =
  | { kind: "none" }
  | { kind: "unreachable"; message: string }
  | { kind: "active"; to: JobState; status_message: string | null; started_at?: string }
  | {
      kind: "terminal";
      to: TerminalState;
      exit_code: number | null;
      signal: string | null;
      reason: string | null;
      finished_at: string;
      started_at: string | null;
      descendants_alive: boolean;
      error: ErrorInfo | null;
      /** The wrapper found the job directory's disk or quota full: output written then may be missing. */
      no_space?: boolean;
      /** What the job's processes left (as recorded, not redacted yet); absent when nobody could look. */
      leftovers?: Leftovers;
      /** What the job cost; absent when nothing measured it. */
      resources?: Resources;
    };

export type TerminalDecision = Extract<Decision, { kind: "terminal" }>;

/** An ErrorInfo with `detail` only when there is one (optional fields are absent, never undefined). */
export function err(
  stage: string,
  reason: string,
  retryable: boolean,
  suggestion: string,
  detail?: string,
): ErrorInfo {
  return detail === undefined
    ? { stage, reason, retryable, suggestion }
    : { stage, reason, retryable, suggestion, detail };
}

/** A `lost` end: nothing says how the job ended, so no exit code or signal; retryable, with what to do and why. */
export function lostDecision(o: {
  reason: string;
  finished_at: string;
  started_at: string | null;
  suggestion: string;
  detail: string;
}): TerminalDecision {
  return {
    kind: "terminal",
    to: "lost",
    exit_code: null,
    signal: null,
    reason: o.reason,
    finished_at: o.finished_at,
    started_at: o.started_at,
    descendants_alive: false,
    error: err("lost", o.reason, true, o.suggestion, o.detail),
  };
}
