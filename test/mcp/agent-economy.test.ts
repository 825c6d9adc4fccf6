// The agent-economy bench's core at 100× speed through the binary: each client profile gets its result within
// the ceiling 1 + ceil(duration / hold) calls (a count, not a timing), no call held by the server past the
// client's own limit (by the server's clock), Tasks clients in one call.
import { expect, test } from "bun:test";
import { runEconomy } from "../../bench/agent-economy-core.ts";

test("every client profile gets each result within 1 + ceil(duration / hold) calls", async () => {
  // At 100× a client's 10 s margin is 100 ms, which a loaded machine's pipes and this test process (nine
  // connections) can eat: the holds are judged by the server's clock (each call's waited time), with 0.5 s (50 s
  // unscaled) for the server's own lateness; the scripted client cuts only a call that hangs (30 s past its limit).
  const outcomes = await runEconomy({ scale: 100, limitSlackMs: 30_000, holdSlackMs: 500 });
  expect(outcomes.length).toBe(20);
  for (const o of outcomes) {
    const what = `${o.profile.label}, ${o.job}`;
    expect({ what, state: o.state }).toEqual({ what, state: "succeeded" });
    expect({ what, cut: o.cut }).toEqual({ what, cut: 0 });
    if (o.measuredCeiling === null) continue; // the naive poller has no ceiling
    // No call held past the client's limit: a held client's holds were measured, and none went over.
    if (o.profile.tasks === "none" && o.profile.limitSeconds !== null) {
      expect({ what, measured: o.longestHoldSeconds !== null }).toEqual({ what, measured: true });
      expect({ what, overLimit: o.overLimit }).toEqual({ what, overLimit: 0 });
    }
    expect({ what, within: o.calls <= o.measuredCeiling }).toEqual({ what, within: true });
    if (o.profile.tasks !== "none") expect({ what, calls: o.calls }).toEqual({ what, calls: 1 });
  }
  const gemini = outcomes.find((o) => o.profile.clientName.startsWith("gemini") && o.seconds === 240);
  expect(gemini?.calls).toBe(2); // shorter than the client's hold: run + one wait_for_job
}, 60_000);
