// Issue 14 through the compiled binary and the official client: every tool result carries `finished_jobs` (each
// once, at most 5) for the session's own jobs that ended unannounced, the "Meanwhile finished" line, named links.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { structured, textOf, waitFor } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Box = ReturnType<typeof makeSandbox>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;
type Finished = {
  job_id: string;
  name: string;
  state: string;
  exit_code: number | null;
  finished_at: string;
};

function sandbox(): Box {
  const box = makeSandbox();
  cleanups.push(box.remove);
  return box;
}

/** Every `finished_jobs` entry each connection's results carried, in order, whichever call carried it. */
const heard = new WeakMap<Conn, Finished[]>();

async function connect(box: Box, era: "legacy" | "modern" = "legacy"): Promise<Conn> {
  const conn = await connectStdio(era, box.env, box.root, "finished-test");
  cleanups.push(conn.close);
  const log: Finished[] = [];
  heard.set(conn, log);
  const call = conn.client.callTool.bind(conn.client);
  conn.client.callTool = (async (...args: Parameters<typeof call>) => {
    const result = await call(...args);
    log.push(...finishedOf(result));
    return result;
  }) as typeof call;
  return conn;
}

const heardIds = (conn: Conn) => heard.get(conn)!.map((f) => f.job_id);

let jobs = 0;

/** Submits a job that ends (exit `code`) once `gate` exists in the sandbox; returns its ID. */
async function gatedJob(conn: Conn, box: Box, gate: string, code = 0): Promise<string> {
  const file = path.join(box.root, gate);
  const { job_id } = structured<{ job_id: string }>(
    await conn.client.callTool({
      name: "submit_job",
      arguments: {
        command: ["sh", "-c", `until [ -e "$0" ]; do sleep 0.05; done; exit ${code} # ${++jobs}`, file],
      },
    }),
  );
  expect(job_id).toMatch(/^job_/);
  cleanups.push(() => {
    writeFileSync(file, "");
  });
  return job_id;
}

const open = (box: Box, gate: string) => writeFileSync(path.join(box.root, gate), "");

function finishedOf(result: unknown): Finished[] {
  return (structured<{ finished_jobs?: Finished[] }>(result).finished_jobs ?? []) as Finished[];
}

/** The CLI waits (a separate process: it tells the MCP session nothing) until the job has ended. */
function cliWait(box: Box, jobId: string): void {
  const r = Bun.spawnSync([BINARY, "wait", jobId, "--timeout", "60"], { env: box.env, cwd: box.root });
  expect(r.exitCode === 0 || r.exitCode === 1 || r.exitCode === 2).toBe(true);
}

/** Calls `list_jobs` until a result announces `jobId`; returns every announcement seen up to then. */
async function untilAnnounced(conn: Conn, jobId: string, tool = "list_jobs"): Promise<Finished[][]> {
  const seen: Finished[][] = [];
  await waitFor(
    async () => {
      const args = tool === "get_job_status" ? { job_id: jobId } : {};
      const got = finishedOf(await conn.client.callTool({ name: tool, arguments: args }));
      if (got.length > 0) seen.push(got);
      return got.some((f) => f.job_id === jobId) ? true : undefined;
    },
    30_000,
    `finished_jobs naming ${jobId}`,
  );
  return seen;
}

describe("finished_jobs on every tool result", () => {
  test("a submitted job that ends is announced once, with its text line, then never again", async () => {
    const box = sandbox();
    const conn = await connect(box);
    const jobId = await gatedJob(conn, box, "gate-a", 2);
    open(box, "gate-a");
    let announced: Finished | undefined;
    let text = "";
    await waitFor(
      async () => {
        const result = await conn.client.callTool({ name: "get_job_status", arguments: { job_id: jobId } });
        announced = finishedOf(result).find((f) => f.job_id === jobId);
        text = textOf(result);
        return announced;
      },
      30_000,
      "the announcement",
    );
    expect(announced).toMatchObject({ job_id: jobId, state: "failed", exit_code: 2 });
    expect(announced!.name).toContain("until [ -e");
    expect(Date.parse(announced!.finished_at)).not.toBeNaN();
    expect(text).toContain(`Meanwhile finished: ${jobId} (`);
    expect(text).toContain("failed, exit 2 — wait_for_job for its result.");
    for (const tool of ["list_jobs", "list_queues"]) {
      const again = await conn.client.callTool({ name: tool, arguments: {} });
      expect(finishedOf(again)).toEqual([]);
      expect(textOf(again)).not.toContain("Meanwhile finished");
    }
    expect(heardIds(conn)).toEqual([jobId]);
  }, 60_000);

  test("a result delivered by wait_for_job or an inline run is never announced", async () => {
    const box = sandbox();
    const conn = await connect(box);
    const waited = await gatedJob(conn, box, "gate-w", 1);
    const pending = conn.client.callTool({ name: "wait_for_job", arguments: { job_id: waited } });
    open(box, "gate-w");
    expect(structured<{ delivery_state: string }>(await pending).delivery_state).toBe("delivered");
    const inline = structured<{ job_id: string; delivery_state: string }>(
      await conn.client.callTool({ name: "run", arguments: { command: ["sh", "-c", "exit 3"] } }),
    );
    expect(inline.delivery_state).toBe("delivered");
    // A control job of the same session: once it is announced, the others had every chance to be.
    const control = await gatedJob(conn, box, "gate-c");
    open(box, "gate-c");
    await untilAnnounced(conn, control);
    // Not in any result: neither the answers that delivered them nor any call after.
    expect(heardIds(conn)).toEqual([control]);
  }, 60_000);

  test("another session's job is never announced", async () => {
    const box = sandbox();
    const mine = await connect(box);
    const other = await connect(box, "modern");
    const theirs = await gatedJob(other, box, "gate-t");
    open(box, "gate-t");
    cliWait(box, theirs);
    // `mine` looked at it (status, logs, a resource subscription): looking is not starting or waiting.
    await mine.client.callTool({ name: "get_job_status", arguments: { job_id: theirs } });
    await mine.client.callTool({ name: "get_job_logs", arguments: { job_id: theirs } });
    await mine.client.subscribeResource({ uri: `awaitless://jobs/${theirs}` });
    const control = await gatedJob(mine, box, "gate-m");
    open(box, "gate-m");
    await untilAnnounced(mine, control, "get_job_status");
    expect(heardIds(mine)).toEqual([control]);
    // And the other session hears of its own job, and only of it.
    await untilAnnounced(other, theirs);
    expect(heardIds(other)).toEqual([theirs]);
  }, 60_000);

  test("at most 5 per result; the rest come on the following calls, each once", async () => {
    const box = sandbox();
    const conn = await connect(box);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await gatedJob(conn, box, "gate-n"));
    open(box, "gate-n");
    for (const id of ids) cliWait(box, id);
    const seen: Finished[][] = [];
    await waitFor(
      async () => {
        const got = finishedOf(await conn.client.callTool({ name: "list_jobs", arguments: {} }));
        if (got.length > 0) seen.push(got);
        return seen.flat().length >= ids.length ? true : undefined;
      },
      30_000,
      "all seven announced",
    );
    for (const batch of seen) expect(batch.length).toBeLessThanOrEqual(5);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(
      seen
        .flat()
        .map((f) => f.job_id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(textOf(await conn.client.callTool({ name: "list_jobs", arguments: {} }))).not.toContain(
      "Meanwhile finished",
    );
  }, 90_000);

  test("a job's resource link is named after its command, not its ID", async () => {
    const box = sandbox();
    const conn = await connect(box);
    const links = (result: unknown) =>
      (result as { content: Array<{ type: string; name?: string; uri?: string }> }).content.filter(
        (c) => c.type === "resource_link",
      );
    const shell = await conn.client.callTool({
      name: "submit_job",
      arguments: { command: "echo made && true" },
    });
    expect(links(shell).map((l) => l.name)).toEqual(["echo made && true"]);
    const argv = await conn.client.callTool({
      name: "run",
      arguments: { command: ["bash", "-c", "echo hello there; sleep 0.3"], inline_timeout_seconds: 0 },
    });
    expect(structured<{ delivery: string }>(argv).delivery).toBe("detached");
    expect(links(argv).map((l) => l.name)).toEqual(["bash -c echo hello there; sleep 0.3"]);
    // An inline answer holds the whole result: no link.
    const inline = await conn.client.callTool({ name: "run", arguments: { command: ["echo", "hello"] } });
    expect(structured<{ delivery: string }>(inline).delivery).toBe("inline");
    expect(links(inline)).toEqual([]);
    const long = `echo ${"x".repeat(100)}`;
    const cut = await conn.client.callTool({ name: "submit_job", arguments: { command: long } });
    const name = links(cut)[0]!.name!;
    expect(name.length).toBeLessThanOrEqual(60);
    expect(name.endsWith("…")).toBe(true);
    const { job_id } = structured<{ job_id: string }>(shell);
    const status = await conn.client.callTool({ name: "get_job_status", arguments: { job_id } });
    expect(links(status).map((l) => [l.name, l.uri])).toEqual([
      ["echo made && true", `awaitless://jobs/${job_id}`],
    ]);
  }, 60_000);
});
