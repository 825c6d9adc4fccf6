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
  /** Calls the client cut at its own limit (should stay 0). */
  cut: number;
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
  /** Milliseconds added to each client's scaled limit: at high scales a 10 s margin becomes 100 ms, which a
   * loaded machine's stdio round trip can eat; tests pass a slack so only a real overrun is a cut. */
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

/** The job's status through the CLI (bench bookkeeping, not one of the agent's calls). */
function cliStatus(env: Record<string, string>, jobId: string): Json {
  const r = Bun.spawnSync([BINARY, "status", jobId, "--json"], { env, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`awaitless status ${jobId}: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as Json;
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
  const final =
    run.final.created_at === undefined
      ? { ...run.final, ...cliStatus(env, String(run.final.job_id)) }
      : run.final;
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
  while (calls < MAX_CALLS) {
    calls++;
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
    if (body.delivery_state === "delivered") return { calls, cut, final: body };
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
