// The retry schedule for connections sshd drops at startup, and the error once every attempt was dropped.
import { expect, test } from "bun:test";
import { STARTUP_ATTEMPTS, startupBackoffMs, startupRefusal } from "../../src/ssh/ssh-startup.ts";

test("backoff doubles from 150 ms, is capped at 2 s, and is jittered to ½–1½×", () => {
  const low = Array.from({ length: STARTUP_ATTEMPTS - 1 }, (_, i) => startupBackoffMs(i + 1, () => 0));
  const high = Array.from({ length: STARTUP_ATTEMPTS - 1 }, (_, i) => startupBackoffMs(i + 1, () => 1));
  expect(low).toEqual([75, 150, 300, 600, 1000]);
  expect(high).toEqual([225, 450, 900, 1800, 3000]);
  // the whole schedule stays within a few seconds, well under a connect timeout
  expect(high.reduce((a, b) => a + b, 0)).toBeLessThan(7000);
});

test("the error names both sshd settings and where to look", () => {
  const r = startupRefusal("box", "me@box:22", 6, 4123, "read ECONNRESET");
  expect(r.message).toContain("cannot connect to box (me@box:22)");
  expect(r.message).toContain("6 times in 4.1s (last: read ECONNRESET)");
  expect(r.message).toContain("MaxStartups");
  expect(r.message).toContain("PerSourcePenalties");
  expect(r.hint).toContain("PerSourcePenaltyExemptList");
  expect(r.hint).toContain("past MaxStartups");
});
