// The agent-economy bench's core at 100× speed through the binary: each client profile gets its result within
// the ceiling 1 + ceil(duration / hold) calls (a count, not a timing), none cut at the client's own limit,
// Tasks clients in one call.
import { expect, test } from "bun:test";
import { runEconomy } from "../../bench/agent-economy-core.ts";

test("every client profile gets each result within 1 + ceil(duration / hold) calls", async () => {
  const outcomes = await runEconomy({ scale: 100, limitSlackMs: 1500 });
  expect(outcomes.length).toBe(20);
  for (const o of outcomes) {
    const what = `${o.profile.label}, ${o.job}`;
    expect({ what, state: o.state }).toEqual({ what, state: "succeeded" });
    // No call outlived the client's own limit (plus 1.5 s of slack for a loaded machine's round trip).
    expect({ what, cut: o.cut }).toEqual({ what, cut: 0 });
    if (o.measuredCeiling === null) continue; // the naive poller has no ceiling
    expect({ what, within: o.calls <= o.measuredCeiling }).toEqual({ what, within: true });
    if (o.profile.tasks !== "none") expect({ what, calls: o.calls }).toEqual({ what, calls: 1 });
  }
  const gemini = outcomes.find((o) => o.profile.clientName.startsWith("gemini") && o.seconds === 240);
  expect(gemini?.calls).toBe(2); // shorter than the client's hold: run + one wait_for_job
}, 60_000);
