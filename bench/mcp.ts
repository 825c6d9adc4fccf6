// Benchmarks of `awaitless mcp` (compiled binary, official client over stdio): cold start, status round trip,
// exit-to-notification/wait latency and bytes returned to the agent, each against a baseline from the same run.
// Usage: bun run build && bun bench/mcp.ts            bun bench/mcp.ts --quick   (fewer repetitions)
import { existsSync } from "node:fs";
import { BINARY } from "../test/mcp/stdio-client.ts";
import { bytesRows } from "./mcp-bytes.ts";
import {
  Bench,
  type Conn,
  type Era,
  exitToPoll,
  median,
  printTable,
  type Row,
  wallMs,
} from "./mcp-common.ts";

const quick = process.argv.includes("--quick");
const N = quick ? 8 : 30;
const N_LATENCY = quick ? 5 : 12;
const N_STATUS = quick ? 50 : 300;

if (!existsSync(BINARY)) {
  console.error(`${BINARY} is missing: build it first with \`bun run build\`, then rerun bun bench/mcp.ts.`);
  process.exit(1);
}

const bench = new Bench();
const rows: Row[] = [];

function timeCli(args: string[]): number {
  const t0 = performance.now();
  bench.cli(args);
  return performance.now() - t0;
}

/**
 * Medians of several measurements taken in turns (one sample of each per round, after one warm-up round),
 * so a change in machine load hits every measurement alike and their ratios stay meaningful.
 */
async function interleaved(rounds: number, fs: Array<() => number | Promise<number>>): Promise<number[]> {
  const samples = fs.map(() => [] as number[]);
  for (let round = 0; round <= rounds; round++) {
    for (const [i, f] of fs.entries()) {
      const t = await f();
      if (round > 0) samples[i]!.push(t);
    }
  }
  return samples.map(median);
}

type Json = Record<string, unknown>;
async function call(conn: Conn, name: string, args: Json): Promise<Json> {
  const result = await conn.client.callTool({ name, arguments: args });
  const body = (result as { structuredContent?: Json }).structuredContent ?? {};
  if (result.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(body)}`);
  return body;
}

async function submit(conn: Conn, script: string): Promise<string> {
  const id = (await call(conn, "submit_job", { command: ["sh", "-c", script] })).job_id as string;
  bench.liveJobs.add(id);
  return id;
}

async function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// 1. Cold start: spawn `awaitless mcp`, handshake (initialize or server/discover), first tools/list answer.
async function coldStart(era: Era): Promise<number> {
  const t0 = performance.now();
  const conn = await bench.connect(era);
  const tools = await conn.client.listTools();
  const t = performance.now() - t0;
  await bench.disconnect(conn);
  if (tools.tools.length < 9)
    throw new Error(`tools/list answered ${tools.tools.length} tools, expected ≥ 9`);
  return t;
}

// 2. get_job_status on a warm server against `awaitless status <id>` as a new process.
async function statusRoundTrip(conn: Conn): Promise<{ warm: number; cli: number }> {
  const id = await submit(conn, "echo status-target");
  await call(conn, "wait_for_job", { job_id: id });
  bench.liveJobs.delete(id);
  const warmCalls: number[] = [];
  const perRound = Math.ceil(N_STATUS / N);
  const [, cli] = await interleaved(N, [
    async () => {
      for (let i = 0; i < perRound; i++) {
        const t0 = performance.now();
        await call(conn, "get_job_status", { job_id: id });
        warmCalls.push(performance.now() - t0);
      }
      return 0;
    },
    () => timeCli(["status", id]),
  ]);
  return { warm: median(warmCalls.slice(perRound)), cli: cli! }; // the first round warms up
}

// 3. From the command's exit (mtime of <data>/jobs/<id>/exit) to the notification / to a held wait returning.
async function exitToNotification(conn: Conn, era: Era, tag: string): Promise<number> {
  const id = await submit(conn, `sleep 0.4; echo notify-${tag}`);
  const uri = `awaitless://jobs/${id}`;
  const heard = new Promise<number>((resolve) => {
    conn.client.setNotificationHandler("notifications/resources/updated", (n) => {
      if (n.params.uri === uri) resolve(wallMs());
    });
  });
  let close = async () => {};
  if (era === "legacy") await conn.client.subscribeResource({ uri });
  else {
    const subscription = await conn.client.listen({ resourceSubscriptions: [uri] });
    close = async () => subscription.close();
  }
  const at = await deadline(heard, 10_000, `notifications/resources/updated for ${uri} (${era})`);
  await close();
  if (era === "legacy") await conn.client.unsubscribeResource({ uri });
  bench.liveJobs.delete(id);
  return at - bench.exitMtimeMs(id);
}

async function exitToWait(conn: Conn, tag: string): Promise<number> {
  const id = await submit(conn, `sleep 0.4; echo wait-${tag}`);
  const body = await call(conn, "wait_for_job", { job_id: id });
  const at = wallMs();
  if (body.wait_state !== "complete") throw new Error(`wait_for_job ended ${String(body.wait_state)}`);
  bench.liveJobs.delete(id);
  return at - bench.exitMtimeMs(id);
}

try {
  const [versionCold, ...mcpCold] = await interleaved(N, [
    () => timeCli(["version"]),
    () => coldStart("legacy"),
    () => coldStart("modern"),
  ]);
  for (const [i, handshake] of ["2025 initialize", "2026 discover"].entries()) {
    rows.push({
      what: `awaitless mcp → first tools/list (cold, ${handshake})`,
      median: mcpCold[i]!,
      unit: "ms",
      baseline: "awaitless version (cold)",
      baselineMedian: versionCold!,
    });
  }

  const legacy = await bench.connect("legacy");
  const modern = await bench.connect("modern");
  const status = await statusRoundTrip(legacy);
  rows.push({
    what: "get_job_status round trip (warm server)",
    median: status.warm,
    unit: "ms",
    baseline: "awaitless status <id> (new process)",
    baselineMedian: status.cli,
  });

  const notifyLegacy: number[] = [];
  const notifyModern: number[] = [];
  const waits: number[] = [];
  const polls: number[] = [];
  for (let i = 0; i < N_LATENCY; i++) {
    notifyLegacy.push(await exitToNotification(legacy, "legacy", `l${i}`));
    notifyModern.push(await exitToNotification(modern, "modern", `m${i}`));
    waits.push(await exitToWait(legacy, `${i}`));
    polls.push(await exitToPoll(bench, 2000, `${i}`));
  }
  const poll = median(polls);
  const latency = (what: string, xs: number[]): Row => ({
    what,
    median: median(xs),
    unit: "ms",
    baseline: "2 s fixed-interval poller",
    baselineMedian: poll,
    target: "≤ 50 ms",
  });
  rows.push(latency("job exit → resources/updated (2025 resources/subscribe)", notifyLegacy));
  rows.push(latency("job exit → resources/updated (2026 subscriptions/listen)", notifyModern));
  rows.push(latency("job exit → held wait_for_job returns", waits));
  await bench.disconnect(modern);

  rows.push(...(await bytesRows(bench, legacy)));
  await bench.disconnect(legacy);
} finally {
  await bench.close();
}

printTable(
  rows,
  `${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · ` +
    `n=${N} cold starts, ${N_STATUS} status calls, ${N_LATENCY} exits${quick ? " (quick)" : ""}\n` +
    "Exit times are the mtime of the job's exit file (kernel coarse clock, may read up to a tick early).\n" +
    "Bytes: 12-minute job scaled 100× in time (1 KiB line every 40 ms, 180 lines, 180 KiB); the run's inline\n" +
    "window (10 s → 0.1 s) and hold budget (50 s → 0.5 s) are scaled alike. Awaitless counts the JSON-RPC\n" +
    "responses on the wire; the naive loop is the whole log's size at 12 evenly spaced moments of the job's\n" +
    "actual run (sampled every 20 ms; the 12th read is after exit, the whole 180 KiB log).",
);
