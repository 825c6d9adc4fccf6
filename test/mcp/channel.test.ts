// Claude Code channel events through the compiled binary and the official client: one notifications/claude/channel
// per job end nothing waited on, none for a delivered result, a burst of 100 endings as one summary, none elsewhere.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { structured, waitFor } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Box = ReturnType<typeof makeSandbox>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;
type Channel = { content: string; meta: Record<string, string> };

function sandbox(): Box {
  const box = makeSandbox();
  cleanups.push(box.remove);
  return box;
}

async function connect(
  box: Box,
  name: string,
  era: "legacy" | "modern" = "legacy",
  capabilities: Record<string, unknown> = {},
): Promise<Conn> {
  const conn = await connectStdio(era, box.env, box.root, name, undefined, capabilities);
  cleanups.push(conn.close);
  return conn;
}

/** Every channel notification the connection received, in order. */
const events = (conn: Conn): Channel[] =>
  conn.tap.log
    .filter((e) => e.dir === "<<" && e.message.method === "notifications/claude/channel")
    .map((e) => e.message.params as Channel);

const untilEvents = (conn: Conn, count: number, what: string) =>
  waitFor(() => (events(conn).length >= count ? events(conn) : undefined), 60_000, what);

let jobs = 0;

/** Submits a job that ends with `code` once `gate` exists; returns its ID. */
async function gatedJob(conn: Conn, box: Box, gate: string, code = 0, name?: string): Promise<string> {
  const file = path.join(box.root, gate);
  cleanups.push(() => writeFileSync(file, ""));
  const script = `until [ -e "$0" ]; do sleep 0.05; done; echo "failing test_$1" >&2; exit ${code}`;
  const { job_id } = structured<{ job_id: string }>(
    await conn.client.callTool({
      name: "submit_job",
      arguments: { command: ["sh", "-c", script, file, String(++jobs)], ...(name && { name }) },
    }),
  );
  return job_id;
}

/** The capabilities the server answered the client's opening request with (2025 initialize, 2026 server/discover). */
function serverCapabilities(conn: Conn): { experimental?: object } {
  const opening = conn.tap.log.find(
    (e) => e.dir === ">>" && (e.message.method === "initialize" || e.message.method === "server/discover"),
  );
  const answer = conn.tap.log.find((e) => e.dir === "<<" && e.message.id === opening?.message.id);
  const result = answer?.message.result as { capabilities?: { experimental?: object } } | undefined;
  if (result?.capabilities === undefined) throw new Error("no capabilities in the server's opening answer");
  return result.capabilities;
}

const open = (box: Box, gate: string) => writeFileSync(path.join(box.root, gate), "");

describe("Claude Code channel events", () => {
  test("the server declares claude/channel; a job that ends with nothing waiting on it is one event", async () => {
    const box = sandbox();
    const conn = await connect(box, "claude-code");
    expect(serverCapabilities(conn).experimental).toEqual({ "claude/channel": {} });
    const jobId = await gatedJob(conn, box, "g1", 2, "make test");
    open(box, "g1");
    const [event] = await untilEvents(conn, 1, "the channel event of the job's end");
    expect(event!.meta).toEqual({ event: "job_ended", job_id: jobId, state: "failed", exit_code: "2" });
    expect(event!.content).toContain(`Job ${jobId} (make test) failed with exit code 2 after`);
    expect(event!.content).toContain(`: failing test_${jobs}.`); // its one digest line
    expect(event!.content).toContain(`Call wait_for_job with {"job_id":"${jobId}"} for its result.`);
    // its result then comes from the call the event names, and a second job's end is one more event, about it alone
    const done = structured<{ state: string }>(
      await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: jobId } }),
    );
    expect(done.state).toBe("failed");
    const second = await gatedJob(conn, box, "g2");
    open(box, "g2");
    const all = await untilEvents(conn, 2, "the second job's event");
    expect(all.length).toBe(2);
    expect(all[1]!.meta).toMatchObject({ event: "job_ended", job_id: second, state: "succeeded" });
    expect(all[1]!.content).not.toContain(jobId);
  }, 90_000);

  test("never for a result the session received: a held wait, an inline run", async () => {
    const box = sandbox();
    const conn = await connect(box, "claude-code");
    const waited = await gatedJob(conn, box, "w1");
    const held = conn.client.callTool({ name: "wait_for_job", arguments: { job_id: waited } });
    // the wait is held (progress or not) before the job is let go
    await waitFor(
      () =>
        conn.tap.log.some(
          (e) =>
            e.dir === ">>" && e.message.method === "tools/call" && JSON.stringify(e.message).includes(waited),
        )
          ? true
          : undefined,
      10_000,
      "the wait_for_job request",
    );
    open(box, "w1");
    expect(structured<{ state: string }>(await held).state).toBe("succeeded");
    const inline = structured<{ job_id: string; delivery: string }>(
      await conn.client.callTool({ name: "run", arguments: { command: ["echo", "quick"] } }),
    );
    expect(inline.delivery).toBe("inline");
    // a marker job's end is the next event, and it names only the marker
    const marker = await gatedJob(conn, box, "m1");
    open(box, "m1");
    const all = await untilEvents(conn, 1, "the marker's event");
    expect(all.length).toBe(1);
    expect(all[0]!.meta.job_id).toBe(marker);
    expect(JSON.stringify(all)).not.toContain(waited);
    expect(JSON.stringify(all)).not.toContain(inline.job_id);
  }, 90_000);

  test("a burst of 100 endings is one summary event", async () => {
    const box = sandbox();
    const conn = await connect(box, "claude-code");
    const lock = path.join(box.root, "burst.lock");
    // held until the test lets all 100 go at once (its input closed): no job polls anything
    const holder = Bun.spawn(["sh", "-c", 'exec 9>"$0"; flock -x 9; echo held; read -r _', lock], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    cleanups.push(() => {
      holder.kill("SIGKILL");
    });
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("held");
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const command = ["flock", "-s", lock, "sh", "-c", `exit $(( $0 % 10 == 0 ))`, String(i)];
      ids.push(
        structured<{ job_id: string }>(
          await conn.client.callTool({ name: "submit_job", arguments: { command } }),
        ).job_id,
      );
    }
    holder.stdin.end();
    const [summary] = await untilEvents(conn, 1, "the summary event");
    expect(summary!.meta).toEqual({ event: "jobs_ended", count: "100" });
    expect(summary!.content).toContain("100 jobs of this session ended: 10 failed, 90 succeeded.");
    // the failed ones are named first, ten in all, then counted
    expect(summary!.content).toMatch(new RegExp(`\\n- ${ids[0]} \\(flock -s .*\\) failed, exit code 1\\n`));
    expect(summary!.content).toContain("…and 90 more.");
    expect(summary!.content).toContain('Call list_jobs with {"state":"terminal","limit":100}');
    // nothing more came of the burst: the next event is a marker job's, alone
    const marker = await gatedJob(conn, box, "after-burst");
    open(box, "after-burst");
    const all = await untilEvents(conn, 2, "the marker's event");
    expect(all.length).toBe(2);
    expect(all[1]!.meta).toMatchObject({ event: "job_ended", job_id: marker });
  }, 180_000);

  test("nothing for a client that does not listen; a client that declares the capability gets events too", async () => {
    const box = sandbox();
    const claude = await connect(box, "claude-code");
    const other = await connect(box, "some-agent");
    const modern = await connect(box, "claude-code", "modern");
    const declared = await connect(box, "some-agent", "legacy", { experimental: { "claude/channel": {} } });
    const ids = [];
    for (const conn of [claude, other, modern, declared]) ids.push(await gatedJob(conn, box, "all"));
    open(box, "all");
    // the two that listen get their own job's end; by then the others would have had theirs
    expect((await untilEvents(claude, 1, "claude-code's event"))[0]!.meta.job_id).toBe(ids[0]);
    expect((await untilEvents(declared, 1, "the declaring client's event"))[0]!.meta.job_id).toBe(ids[3]);
    // the ones that do not listen heard of their job's end (finished_jobs) but got no event
    for (const [conn, id] of [
      [other, ids[1]],
      [modern, ids[2]],
    ] as const) {
      await waitFor(
        async () => {
          const r = structured<{ finished_jobs?: Array<{ job_id: string }> }>(
            await conn.client.callTool({ name: "list_jobs", arguments: {} }),
          );
          return r.finished_jobs?.some((f) => f.job_id === id) ? true : undefined;
        },
        30_000,
        `finished_jobs naming ${id}`,
      );
      expect(events(conn)).toEqual([]);
    }
    expect(serverCapabilities(modern)).toBeDefined();
    expect(serverCapabilities(modern).experimental).toBeUndefined();
  }, 90_000);
});
