// Bad input to issue 17's MCP arguments (retries, retry_on, after, array) through the binary and the official client:
// an error naming what is wrong (the nearest valid word for a typo) and what to pass, in MCP words; nothing created.
import { describe, expect, test } from "bun:test";
import { structured, textOf } from "./harness.ts";
import { stdioSession } from "./stdio-client.ts";

describe("issue 17 arguments over MCP: bad input", () => {
  const session = stdioSession();

  test("a typo gets the nearest valid word, every answer says what to pass, and no job is created", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ retries: 1, retry_on: ["exitt"] }, 'bad retry class "exitt" (did you mean `exit`?)'],
      [{ retries: 1, retry_on: ["lost", "infrastructre"] }, "(did you mean `infrastructure`?)"],
      [{ retries: -1 }, "bad retries -1"],
      [{ after: ["job_01ARZ3NDEKTSV4RRFFQ69G5FAV:okk"] }, 'unknown condition "okk" (did you mean `ok`?)'],
      [{ array: "0-3%0" }, "bad array throttle %0"],
    ];
    for (const tool of ["submit_job", "run"]) {
      for (const [args, says] of cases) {
        const r = await session.conn!.client.callTool({
          name: tool,
          arguments: { command: ["true"], ...args },
        });
        expect({ tool, args, isError: r.isError }).toEqual({ tool, args, isError: true });
        const text = textOf(r);
        expect({ args, has: text.includes(says) }).toEqual({ args, has: true });
        expect(text).toContain("\nNext: ");
        expect(text).not.toMatch(/--[a-z]|awaitless /);
      }
    }
    const jobs = structured<{ jobs: unknown[] }>(
      await session.conn!.client.callTool({ name: "list_jobs", arguments: {} }),
    ).jobs;
    expect(jobs).toEqual([]);
  }, 60_000);
});
