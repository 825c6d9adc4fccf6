// Bytes returned to the agent for a long chatty job: Awaitless (run + wait) against re-reading the whole log.
// The 12-minute job (1 KiB every 4 s) is scaled 100× in time: 180 lines of 1 KiB, one every 40 ms.
import { statSync } from "node:fs";
import { type Bench, type Conn, type Row, responseBytes, wallMs } from "./mcp-common.ts";

const SCALE = 100;
const LINES = 180;
const LINE_INTERVAL_S = 4 / SCALE;
const INLINE_WINDOW_S = 10 / SCALE; // the run tool's default 10 s inline window
const DEFAULT_HOLD_S = 50 / SCALE; // the default 50 s hold budget
const NAIVE_READS = 12;

/** 180 lines of exactly 1024 bytes ("step NNN " + 1014 zeros + newline), one every 40 ms. */
function chattyJob(tag: string): string[] {
  return [
    "sh",
    "-c",
    `i=0; while [ $i -lt ${LINES} ]; do printf 'step %03d %01014d\\n' $i 0; sleep ${LINE_INTERVAL_S}; ` +
      `i=$((i+1)); done # ${tag}`,
  ];
}

type Json = Record<string, unknown>;
async function call(conn: Conn, name: string, args: Json): Promise<Json> {
  const result = await conn.client.callTool({ name, arguments: args }, { timeout: 120_000 });
  const body = (result as { structuredContent?: Json }).structuredContent ?? {};
  if (result.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(body)}`);
  return body;
}

async function runDetached(bench: Bench, conn: Conn, tag: string): Promise<string> {
  const out = await call(conn, "run", { command: chattyJob(tag), inline_timeout_seconds: INLINE_WINDOW_S });
  const id = out.job_id as string;
  bench.liveJobs.add(id);
  if (out.delivery !== "detached") throw new Error(`run returned ${String(out.delivery)}, expected detached`);
  return id;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // not created yet
  }
}

/**
 * The naive agent `cat`s the whole log at 12 evenly spaced moments of the job's actual run (from the mtime of
 * `started` to that of `exit`); the log's size is sampled every 20 ms so the job's own pace does not skew it.
 */
async function naiveReads(bench: Bench, jobId: string, done: Promise<unknown>): Promise<number[]> {
  const file = bench.jobFile(jobId, "stdout");
  const samples: Array<{ atMs: number; size: number }> = [];
  let finished = false;
  const stop = () => {
    finished = true;
  };
  done.then(stop, stop);
  while (!finished) {
    samples.push({ atMs: wallMs(), size: sizeOf(file) });
    await Bun.sleep(20);
  }
  const startMs = statSync(bench.jobFile(jobId, "started")).mtimeMs;
  const endMs = bench.exitMtimeMs(jobId);
  const sizes: number[] = [];
  for (let k = 1; k < NAIVE_READS; k++) {
    const atMs = startMs + (k * (endMs - startMs)) / NAIVE_READS;
    sizes.push(samples.findLast((s) => s.atMs <= atMs)?.size ?? 0);
  }
  sizes.push(sizeOf(file)); // the last read, after the job ended: the whole log
  return sizes;
}

/** A client that holds the wait as long as the job runs: one run, one wait_for_job. */
async function oneWait(bench: Bench, conn: Conn) {
  const mark = conn.tap.log.length;
  const id = await runDetached(bench, conn, "one-wait");
  const waited = call(conn, "wait_for_job", { job_id: id });
  const sizes = await naiveReads(bench, id, waited);
  const body = await waited;
  if (body.wait_state !== "complete") throw new Error(`wait_for_job ended ${String(body.wait_state)}`);
  bench.liveJobs.delete(id);
  return { bytes: responseBytes(conn.tap.log.slice(mark)), sizes };
}

/** The default 50 s hold budget (scaled): run, then wait_for_job again after each client_timeout. */
async function budgetedWaits(bench: Bench, conn: Conn) {
  const mark = conn.tap.log.length;
  const id = await runDetached(bench, conn, "budgeted");
  let waits = 0;
  for (;;) {
    waits += 1;
    const body = await call(conn, "wait_for_job", { job_id: id, timeout_seconds: DEFAULT_HOLD_S });
    if (body.wait_state === "complete") break;
    if (waits > 100) throw new Error(`job ${id} still ${String(body.job_state)} after 100 waits`);
  }
  bench.liveJobs.delete(id);
  return { bytes: responseBytes(conn.tap.log.slice(mark)), waits };
}

export async function bytesRows(bench: Bench, conn: Conn): Promise<Row[]> {
  const one = await oneWait(bench, conn);
  const naive = one.sizes.reduce((a, b) => a + b, 0);
  const fullLog = one.sizes.at(-1) ?? 0;
  if (fullLog !== LINES * 1024)
    throw new Error(`the job's log is ${fullLog} bytes, expected ${LINES * 1024}`);
  const budgeted = await budgetedWaits(bench, conn);
  const baseline = `naive: whole log re-read ${NAIVE_READS}× (${one.sizes.map((s) => s >> 10).join("+")} KiB)`;
  return [
    {
      what: "bytes to the agent, 12-min job logging 1 KiB/4 s: run + 1 held wait_for_job",
      median: one.bytes,
      unit: "KiB",
      baseline,
      baselineMedian: naive,
    },
    {
      what: `same job, 50 s hold budget: run + ${budgeted.waits} wait_for_job (${budgeted.waits - 1} client_timeout)`,
      median: budgeted.bytes,
      unit: "KiB",
      baseline,
      baselineMedian: naive,
    },
  ];
}
