// Agent-economy core: a scripted agent per client profile drives `awaitless mcp` (the binary, over stdio, with
// the official client) through time-scaled jobs and counts the calls and bytes it took to get each result.
import { writeFileSync } from "node:fs";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { isTerminal, type JobState } from "../src/core/model/job.ts";
import { structured, textOf } from "../test/mcp/harness.ts";
import { BINARY, connectStdio, makeSandbox } from "../test/mcp/stdio-client.ts";
import {
  JOBS,
  NAIVE,
  POLL_EVERY_SECONDS,
  PROFILES,
  type Profile,
  scaled,
  scaledServerSetup,
} from "./agent-economy-profiles.ts";

type Json = Record<string, unknown>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;

export interface Outcome {
  profile: Profile;
  job: string;
  /** Nominal job duration, real seconds. */
  seconds: number;
  /** created_at → finished_at of the job, scaled back to real seconds. */
  measuredSeconds: number;
  /** Tool calls the agent's model made (each a turn in its context). */
  calls: number;
  /** Calls the client cut at its own limit (plus the run's `limitSlackMs`; should stay 0). */
  cut: number;
  /**
   * The longest time the server held one of the agent's calls, scaled back to real seconds: its own clock (the
   * job's `waited_seconds`), so a loaded machine's pipe and scheduling delays are not in it. null: no held client.
   */
  longestHoldSeconds: number | null;
  /** The median of those holds (real seconds): where a held client's calls typically end. null: no held client. */
  medianHoldSeconds: number | null;
  /** Calls the server held past the client's limit (should stay 0). */
  overLimit: number;
  /** JSON-RPC requests on the wire (tasks/get polls included). */
  requests: number;
  /** Bytes the server sent (responses + notifications), as JSON lines. */
  bytes: number;
  notifications: number;
  state: string;
  /** 1 + ceil(duration / hold) for the nominal and the measured duration (the naive poller has none). */
  ceiling: number | null;
  measuredCeiling: number | null;
}

export interface EconomyOptions {
  /** Time runs this many times faster than real (1 = real time). */
  scale: number;
  profiles?: Profile[];
  jobs?: typeof JOBS;
  naive?: boolean;
  /** Milliseconds added to each client's scaled limit before the scripted client cuts a call: at high scales a
   * 10 s margin becomes 100 ms, which a loaded machine's stdio round trip and test process can eat. Tests pass a
   * long one (the client then cuts only a call that hangs) and judge the holds by the server's clock instead. */
  limitSlackMs?: number;
}

/** Runs every profile (in parallel, one server each) through every job, one after the other. */
export async function runEconomy(options: EconomyOptions): Promise<Outcome[]> {
  const { scale } = options;
  if (!(scale >= 1 && scale <= 500)) throw new Error(`scale ${scale}: pass a number from 1 to 500`);
  const profiles = options.profiles ?? PROFILES;
  const all = options.naive === false ? profiles : [...profiles, NAIVE];
  const jobs = options.jobs ?? JOBS;
  const setup = scaledServerSetup(scale, profiles);
  const box = makeSandbox(setup.env);
  writeFileSync(box.env.AWAITLESS_CONFIG!, setup.config);
  const conns: Conn[] = [];
  try {
    const perProfile = await Promise.all(
      all.map(async (profile, index) => {
        const conn = await connectStdio(
          profile.era,
          box.env,
          box.root,
          profile.clientName,
          { command: BINARY, args: profile.serverArgs(scale) },
          profile.tasks === "2025-11-25" ? { tasks: {} } : {},
        );
        conns.push(conn);
        const outcomes: Outcome[] = [];
        for (const job of jobs)
          outcomes.push(
            await runOne(conn, box.env, profile, job, scale, `p${index}`, options.limitSlackMs ?? 0),
          );
        checkHoldLine(conn, profile);
        return outcomes;
      }),
    );
    return perProfile.flat();
  } finally {
    for (const conn of conns) await conn.close();
    box.remove();
  }
}

/** The server logs the hold it picked on the client's first call; it must be the profile's. */
function checkHoldLine(conn: Conn, profile: Profile): void {
  const prefix = `awaitless mcp: client ${JSON.stringify(profile.clientName)}: hold budget `;
  const line = conn
    .stderr()
    .split("\n")
    .find((l) => l.startsWith(prefix));
  if (line === undefined || !line.includes(`(${profile.holdSource})`))
    throw new Error(`${profile.label}: the server did not pick the expected hold: ${line ?? conn.stderr()}`);
}

/**
 * A CLI command's JSON answer (bench bookkeeping, not one of the agent's calls), run beside the other profiles'
 * calls rather than blocking their timers as a synchronous spawn would.
 */
async function cliJson(env: Record<string, string>, args: string[]): Promise<Json> {
  const proc = Bun.spawn([BINARY, ...args, "--json"], { env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`awaitless ${args.join(" ")}: ${err}`);
  return JSON.parse(out) as Json;
}

/**
 * Each call's hold by the server's clock, in ms. A pending answer's `waited_seconds` is the job's waited time so
 * far, so each one gives its call's hold; the total (a `wait --json` on the ended job, which holds nothing) gives
 * what the other calls held (the delivered one, a cut one, any answer read as text alone), shared evenly when
 * there is more than one.
 */
function holdsOf(waitedAfter: (number | null)[], totalMs: number): number[] {
  const holds: (number | null)[] = [];
  let before = 0;
  let known = 0;
  for (const w of waitedAfter) {
    if (w === null) {
      holds.push(null);
      continue;
    }
    holds.push(w - before);
    known += w - before;
    before = w;
  }
  const unknown = holds.filter((h) => h === null).length;
  const share = unknown === 0 ? 0 : Math.max(0, totalMs - known) / unknown;
  return holds.map((h) => h ?? share);
}

async function runOne(
  conn: Conn,
  env: Record<string, string>,
  profile: Profile,
  job: (typeof JOBS)[number],
  scale: number,
  tag: string,
  slackMs: number,
): Promise<Outcome> {
  const sleep = scaled(job.seconds, scale);
  const id = `${tag}-${job.seconds}`;
  // Output first, then the sleep: a script that opens with a sleep is refused as a bare wait.
  const command = ["sh", "-c", `echo start ${id}; sleep ${sleep}; echo done ${id}`];
  const from = conn.tap.log.length;
  const run =
    profile === NAIVE
      ? await naivePoller(conn, command, scale)
      : profile.tasks === "none"
        ? await heldAgent(conn, profile, command, id, scale, slackMs)
        : await taskAgent(conn, profile, command, id);
  const window = conn.tap.log.slice(from);
  let bytes = 0;
  let notifications = 0;
  for (const e of window) {
    if (e.dir !== "<<") continue;
    bytes += Buffer.byteLength(JSON.stringify(e.message)) + 1;
    if (e.message.method !== undefined) notifications++;
  }
  const requests = window.filter((e) => e.dir === ">>" && e.message.id !== undefined).length;
  // A client that got the text alone (Qwen Code) has no timestamps in what it read: the CLI has them.
  const jobId = String(run.final.job_id);
  const final =
    run.final.created_at === undefined
      ? { ...run.final, ...(await cliJson(env, ["status", jobId])) }
      : run.final;
  let longestHoldSeconds: number | null = null;
  let medianHoldSeconds: number | null = null;
  let overLimit = 0;
  if (run.waitedAfter !== undefined) {
    const waited = Number((await cliJson(env, ["wait", jobId])).waited_seconds) * 1000;
    const holds = holdsOf(run.waitedAfter, waited);
    longestHoldSeconds = (Math.max(...holds) / 1000) * scale;
    const sorted = [...holds].sort((a, b) => a - b);
    medianHoldSeconds = (sorted[Math.floor(sorted.length / 2)]! / 1000) * scale;
    if (profile.limitSeconds !== null) {
      const limitMs = (profile.limitSeconds / scale) * 1000;
      overLimit = holds.filter((h) => h > limitMs).length;
    }
  }
  const measuredSeconds =
    ((Date.parse(String(final.finished_at)) - Date.parse(String(final.created_at))) / 1000) * scale;
  const ceilingOf = (d: number) => (profile === NAIVE ? null : 1 + Math.ceil(d / profile.holdSeconds));
  return {
    profile,
    job: job.label,
    seconds: job.seconds,
    measuredSeconds,
    calls: run.calls,
    cut: run.cut,
    longestHoldSeconds,
    medianHoldSeconds,
    overLimit,
    requests,
    bytes,
    notifications,
    state: String(run.final.state),
    ceiling: ceilingOf(job.seconds),
    measuredCeiling: ceilingOf(measuredSeconds),
  };
}

interface AgentRun {
  calls: number;
  cut: number;
  /** A held client's calls in order: the job's `waited_seconds` (ms) its answer gave, null when it gave none. */
  waitedAfter?: (number | null)[];
  /** The terminal result (or status) the agent ended with. */
  final: Json;
}

/** Calls the agent may make for one result before the bench calls it a runaway loop. */
const MAX_CALLS = 400;

/**
 * What the agent reads of an answer: its structuredContent, or for a client that gets the text alone (Qwen Code)
 * the job, its state and whether the result is delivered, from the text (a pending one names the next call).
 */
function answerOf(result: unknown): Json {
  const body = structured<Json | undefined>(result);
  if (body !== undefined) return body;
  const text = textOf(result);
  const job = /^Job (job_\w+)(?: \([^)]*\))? (succeeded|failed|was killed|ended (\w+)|is (\w+))/.exec(text);
  if (job === null) throw new Error(`an answer without structuredContent whose text names no job: ${text}`);
  const pending = /Call wait_for_job with/.test(text);
  const state = job[2] === "was killed" ? "timed_out" : (job[3] ?? job[4] ?? job[2]);
  return { job_id: job[1], state, delivery_state: pending ? "pending" : "delivered" };
}

/** `run`, then `wait_for_job` while the answer is pending; a call the client cuts at its limit is made again. */
async function heldAgent(
  conn: Conn,
  profile: Profile,
  command: string[],
  requestId: string,
  scale: number,
  slackMs: number,
): Promise<AgentRun> {
  const timeout = profile.limitSeconds === null ? 3_600_000 : (profile.limitSeconds / scale) * 1000 + slackMs;
  const options = { timeout, ...(profile.progress && { onprogress: () => {} }) };
  let calls = 0;
  let cut = 0;
  let jobId: string | undefined;
  const waitedAfter: (number | null)[] = [];
  while (calls < MAX_CALLS) {
    calls++;
    waitedAfter.push(null);
    const call =
      jobId === undefined
        ? { name: "run", arguments: { command, client_request_id: requestId } }
        : { name: "wait_for_job", arguments: { job_id: jobId } };
    let body: Json;
    try {
      body = answerOf(await conn.client.callTool(call, options));
    } catch {
      cut++; // the client gave up on the call (its own limit): the agent calls again
      continue;
    }
    if (typeof body.job_id !== "string") throw new Error(`${call.name} answered ${JSON.stringify(body)}`);
    jobId = body.job_id;
    if (typeof body.waited_seconds === "number") waitedAfter[calls - 1] = body.waited_seconds * 1000;
    if (body.delivery_state === "delivered") return { calls, cut, final: body, waitedAfter };
  }
  throw new Error(`${profile.label}: no result after ${MAX_CALLS} calls`);
}

/** One `run_job` call as a task; the official requester polls `tasks/get` and fetches the result. */
async function taskAgent(
  conn: Conn,
  profile: Profile,
  command: string[],
  requestId: string,
): Promise<AgentRun> {
  const session = createTaskSessionFromClient(
    conn.client,
    profile.tasks === "2026-07-28"
      ? {
          endpointId: "agent-economy",
          rawDispatch: conn.tap.rawDispatch,
          v2RequestFraming: {
            protocolVersion: "2026-07-28",
            clientInfo: { name: profile.clientName, version: "0.0.0" },
            clientCapabilities: {},
          },
        }
      : { endpointId: "agent-economy" },
  );
  try {
    const execution = await session.callTool(
      "run_job",
      { command, client_request_id: requestId },
      { task: { preference: "require" } },
    );
    if (execution.kind !== "task") throw new Error(`${profile.label}: run_job did not answer with a task`);
    const { outcome } = await execution.settle();
    const final = structured<Json>(resultFromTaskOutcome(outcome));
    return { calls: 1, cut: 0, final };
  } finally {
    await session.close();
  }
}

/** `submit_job`, `get_job_status` every POLL_EVERY_SECONDS until the job ends, then `get_job_logs` for its output. */
async function naivePoller(conn: Conn, command: string[], scale: number): Promise<AgentRun> {
  const submitted = structured<{ job_id: string }>(
    await conn.client.callTool({ name: "submit_job", arguments: { command } }),
  );
  let calls = 1;
  while (calls < MAX_CALLS) {
    await Bun.sleep((POLL_EVERY_SECONDS / scale) * 1000);
    calls++;
    const status = structured<Json>(
      await conn.client.callTool({ name: "get_job_status", arguments: { job_id: submitted.job_id } }),
    );
    if (isTerminal(status.state as JobState)) {
      calls++;
      await conn.client.callTool({ name: "get_job_logs", arguments: { job_id: submitted.job_id } });
      return { calls, cut: 0, final: status };
    }
  }
  throw new Error(`naive poller: no result after ${MAX_CALLS} calls`);
}
