// Job resources: template, list, read, and terminal-transition notifications in both generations, on the real
// service (local backend, temp data directory) with gated jobs whose output and end the test releases.
import { afterEach, describe, expect, test } from "bun:test";
import { type Era, structured, waitFor } from "./harness.ts";
import { connectInProcess } from "./in-process.ts";
import { realService } from "./real-service.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(era: Era) {
  const real = realService();
  const conn = await connectInProcess(real.service, era);
  cleanups.push(async () => {
    await conn.close();
    await real.dispose();
  });
  const updated: string[] = [];
  conn.client.setNotificationHandler("notifications/resources/updated", (n) => {
    updated.push(n.params.uri);
  });
  /** Submits a gated job: the test releases its output and its end. */
  const submit = async () => {
    const gate = real.gate();
    const job = structured<{ job_id: string }>(
      await conn.client.callTool({ name: "submit_job", arguments: { command: gate.command } }),
    );
    return {
      job_id: job.job_id,
      write: (text: string) => gate.write(job.job_id, text),
      finish: (code: number) => gate.finish(job.job_id, code),
    };
  };
  return { submit, client: conn.client, updated };
}

/** Subscribes the era's way: resources/subscribe (2025) or subscriptions/listen (2026). */
async function subscribe(era: Era, client: Awaited<ReturnType<typeof setup>>["client"], uri: string) {
  if (era === "legacy") {
    await client.subscribeResource({ uri });
    return;
  }
  const subscription = await client.listen({ resourceSubscriptions: [uri] });
  cleanups.push(() => subscription.close());
}

for (const era of ["legacy", "modern"] as const) {
  describe(`job resources (${era})`, () => {
    test("template, list and read show status and bounded tails", async () => {
      const { client, submit } = await setup(era);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["awaitless://jobs/{job_id}"]);
      const job = await submit();
      await job.write("compiling\n");
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual([`awaitless://jobs/${job.job_id}`]);
      const read = await client.readResource({ uri: `awaitless://jobs/${job.job_id}` });
      const body = JSON.parse((read.contents[0] as { text: string }).text);
      expect(body.job.state).toBe("running");
      expect(body.stdout_tail).toBe("compiling\n");
      await job.finish(0);
      const done = JSON.parse(
        (
          (await client.readResource({ uri: `awaitless://jobs/${job.job_id}` })).contents[0] as {
            text: string;
          }
        ).text,
      );
      expect(done.result.state).toBe("succeeded");
    });

    test("reading an unknown job fails and suggests list_jobs", async () => {
      const { client } = await setup(era);
      await expect(client.readResource({ uri: "awaitless://jobs/job_NOPE" })).rejects.toThrow(/list_jobs/);
    });

    test("a subscription is told when the job reaches a terminal state", async () => {
      const { client, submit, updated } = await setup(era);
      const job = await submit();
      const uri = `awaitless://jobs/${job.job_id}`;
      await subscribe(era, client, uri);
      await job.write("still going\n");
      expect(updated).toEqual([]);
      await job.finish(1);
      await waitFor(() => (updated.includes(uri) ? true : undefined), 5_000, "resources/updated");
    });

    test("subscribing to an already finished job is answered at once", async () => {
      const { client, submit, updated } = await setup(era);
      const job = await submit();
      await job.finish(0);
      const uri = `awaitless://jobs/${job.job_id}`;
      await subscribe(era, client, uri);
      await waitFor(
        () => (updated.includes(uri) ? true : undefined),
        5_000,
        "resources/updated for a finished job",
      );
    });

    test("jobs nobody subscribed to are not announced", async () => {
      const { client, submit, updated } = await setup(era);
      const watched = await submit();
      const other = await submit();
      await subscribe(era, client, `awaitless://jobs/${watched.job_id}`);
      await other.finish(0);
      await watched.finish(0);
      await waitFor(() => (updated.length > 0 ? true : undefined), 5_000, "resources/updated");
      expect(updated).toEqual([`awaitless://jobs/${watched.job_id}`]);
    });
  });
}
