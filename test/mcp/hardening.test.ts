// The compiled `awaitless mcp` against hostile client input, over the official client: refused subscriptions
// are not kept and subscriptions are capped, an oversized request line is answered with an error and the
// session goes on, and a catastrophic grep pattern is refused before it runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newJobId } from "../../src/core/model/ids.ts";
import { MAX_SUBSCRIPTIONS_PER_SESSION } from "../../src/mcp/job-watch.ts";
import { MAX_REQUEST_LINE_BYTES } from "../../src/mcp/request-lines.ts";
import type { Era } from "./harness.ts";
import { structured, textOf } from "./harness.ts";
import { seedFinishedJobs } from "./seed-jobs.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

const box = makeSandbox();
const cwd = box.root;
const sessions: { close(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of sessions) await s.close();
  box.remove();
});

async function connect(era: Era) {
  const conn = await connectStdio(era, box.env, cwd);
  sessions.push(conn);
  return conn;
}

/** Finished jobs written straight into the sandbox's store (no processes), to subscribe to. */
const seeded: string[] = [];
beforeAll(() => {
  seeded.push(
    ...seedFinishedJobs(box.env.AWAITLESS_DATA_DIR!, box.root, MAX_SUBSCRIPTIONS_PER_SESSION + 1, (i) => [
      "true",
      String(i),
    ]),
  );
});

const uriOf = (id: string) => `awaitless://jobs/${id}`;

describe("resources/subscribe (2025)", () => {
  test("refused subscriptions are not kept; the per-session cap is a clear error; unsubscribing frees a place", async () => {
    const { client } = await connect("legacy");
    // More refused subscriptions than the cap: had any been kept, the valid ones below would hit it.
    const refused = [
      ...Array.from({ length: MAX_SUBSCRIPTIONS_PER_SESSION }, () => uriOf(newJobId())),
      ...Array.from({ length: 200 }, (_, i) => uriOf(`job_${"x".repeat(1000)}${i}`)),
    ];
    for (const uri of refused) {
      await expect(client.subscribeResource({ uri })).rejects.toThrow(/Cannot subscribe|is not a job ID/);
    }
    const [last, ...rest] = [...seeded].reverse();
    for (const id of rest) await client.subscribeResource({ uri: uriOf(id) });
    let capped: unknown;
    await client.subscribeResource({ uri: uriOf(last!) }).catch((e: unknown) => {
      capped = e;
    });
    expect(String(capped)).toContain(`already holds ${MAX_SUBSCRIPTIONS_PER_SESSION} subscriptions`);
    expect(String(capped)).toContain("resources/unsubscribe");
    // Subscribing again to one already held is no new subscription.
    await client.subscribeResource({ uri: uriOf(rest[0]!) });
    await client.unsubscribeResource({ uri: uriOf(rest[0]!) });
    await client.subscribeResource({ uri: uriOf(last!) });
  }, 120_000);
});

for (const era of ["legacy", "modern"] as const) {
  describe(`hostile input (${era})`, () => {
    test("a request line over 10 MiB is answered with an error, and the session goes on", async () => {
      const conn = await connect(era);
      const huge = "x".repeat(MAX_REQUEST_LINE_BYTES);
      let refusal: unknown;
      await conn.client
        .callTool({ name: "submit_job", arguments: { command: ["echo", huge] } })
        .catch((e: unknown) => {
          refusal = e;
        });
      expect(String(refusal)).toContain("over the 10 MiB a request may have");
      expect((refusal as { code?: number }).code).toBe(-32600);
      const tools = await conn.client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain("get_job_logs");
      expect(conn.stderr()).toContain("still serving");
    }, 60_000);

    test("a command or env value with a lone surrogate is refused, not written as U+FFFD", async () => {
      const { client } = await connect(era);
      for (const args of [
        { command: ["printf", "%s", "a\ud800b"] },
        { command: ["true"], env: { X: "\udc00" } },
      ]) {
        const r = await client.callTool({ name: "submit_job", arguments: args });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toContain("lone UTF-16 surrogate");
      }
      const listed = await client.callTool({ name: "list_jobs", arguments: {} });
      expect(JSON.stringify(structured(listed))).not.toContain("printf");
    }, 60_000);

    test("grep ^(a+)+$ on a line of 30 a's and '!' is refused at once; the server keeps answering", async () => {
      const { client } = await connect(era);
      const job = structured<{ job_id: string }>(
        await client.callTool({
          name: "submit_job",
          arguments: { command: ["sh", "-c", `echo ${"a".repeat(30)}!; echo done`] },
        }),
      );
      await client.callTool({ name: "wait_for_job", arguments: { job_id: job.job_id } });
      const order: string[] = [];
      const grep = client
        .callTool({ name: "get_job_logs", arguments: { job_id: job.job_id, grep: "^(a+)+$" } })
        .then((r) => {
          order.push("grep");
          return r;
        });
      const list = client.listTools().then(() => order.push("list"));
      const [refused] = await Promise.all([grep, list]);
      expect(order.sort()).toEqual(["grep", "list"]);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("the group (a+) is repeated and itself repeats");
      // An ordinary pattern on the same log still works.
      const ok = await client.callTool({
        name: "get_job_logs",
        arguments: { job_id: job.job_id, grep: "^a+!$", stream: "stdout" },
      });
      expect(structured<{ stdout: string }>(ok).stdout).toBe(`1:${"a".repeat(30)}!\n`);
    }, 60_000);
  });
}
