import { describe, expect, test } from "bun:test";
import {
  ACTIVE_STATES,
  isTerminal,
  JOB_STATES,
  type JobState,
  TERMINAL_STATES,
} from "../../src/core/model/job.ts";
import { canTransition } from "../../src/core/rules/transitions.ts";

// The whole table, written out so a change to the rules shows up here (docs/protocol.md, "Lifecycle").
const ALLOWED: Record<JobState, JobState[]> = {
  queued: ["starting", "running", "stalled", ...TERMINAL_STATES],
  starting: ["running", "stalled", ...TERMINAL_STATES],
  running: ["stalled", ...TERMINAL_STATES],
  stalled: ["running", ...TERMINAL_STATES],
  succeeded: [],
  failed: [],
  cancelled: [],
  timed_out: [],
  lost: [],
};

describe("transition table", () => {
  for (const from of JOB_STATES) {
    for (const to of JOB_STATES) {
      const expected = ALLOWED[from].includes(to);
      test(`${from} → ${to}: ${expected ? "allowed" : "refused"}`, () => {
        expect(canTransition(from, to)).toBe(expected);
      });
    }
  }
  test("terminal and active partition the states", () => {
    expect(TERMINAL_STATES.every(isTerminal)).toBe(true);
    expect(ACTIVE_STATES.some((s) => isTerminal(s))).toBe(false);
    expect(JOB_STATES.length).toBe(9);
  });
});
