// Shared pieces of the MCP benchmarks: sandbox, timing helpers, job bookkeeping, wire byte counts, the table.
import { statSync } from "node:fs";
import path from "node:path";
import type { WireEntry } from "../test/mcp/harness.ts";
import { BINARY, connectStdio, makeSandbox } from "../test/mcp/stdio-client.ts";

export type Era = "legacy" | "modern";
export type Conn = Awaited<ReturnType<typeof connectStdio>>;

export interface Row {
  what: string;
  median: number;
  unit: string;
  baseline: string;
  baselineMedian: number;
  target?: string;
}

/** Wall-clock milliseconds with sub-millisecond resolution (comparable with file mtimes). */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export function median(xs: number[]): number {
  if (xs.length === 0) throw new Error("median of no samples: the measurement loop ran zero times");
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One private data dir for the whole run; connections and jobs are tracked so all of them get stopped. */
export class Bench {
  readonly box = makeSandbox();
  readonly env = this.box.env;
  readonly dataDir = this.env.AWAITLESS_DATA_DIR!;
  private readonly conns = new Set<Conn>();
  /** Jobs that may still be running; cancelled by ID at the end. */
  readonly liveJobs = new Set<string>();

  async connect(era: Era): Promise<Conn> {
    const conn = await connectStdio(era, this.env, this.box.root, "awaitless-bench");
    this.conns.add(conn);
    return conn;
  }

  async disconnect(conn: Conn): Promise<void> {
    this.conns.delete(conn);
    await conn.close(); // client.close, then SIGKILL to the server's PID
  }

  /** Runs the CLI to completion; throws with its stderr when it fails. */
  cli(args: string[]): string {
    const r = Bun.spawnSync([BINARY, ...args], { env: this.env, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0)
      throw new Error(`awaitless ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString().trim()}`);
    return r.stdout.toString();
  }

  submitCli(argv: string[]): string {
    const id = (JSON.parse(this.cli(["submit", "--json", "--", ...argv])) as { job_id: string }).job_id;
    this.liveJobs.add(id);
    return id;
  }

  jobFile(jobId: string, name: "exit" | "started" | "stdout"): string {
    return path.join(this.dataDir, "jobs", jobId, name);
  }

  /** The command's exit time: the wrapper writes `exit` right after the command exits. */
  exitMtimeMs(jobId: string): number {
    return statSync(this.jobFile(jobId, "exit")).mtimeMs;
  }

  /** Stops every server by PID, cancels jobs that may still run, removes the data dir. */
  async close(): Promise<void> {
    for (const conn of [...this.conns]) await this.disconnect(conn);
    for (const id of this.liveJobs) {
      Bun.spawnSync([BINARY, "cancel", id], { env: this.env, stdout: "ignore", stderr: "ignore" });
    }
    this.box.remove();
  }
}

/** A 2 s fixed-interval poller started at a random phase: delay from the command's exit to seeing it. */
export async function exitToPoll(bench: Bench, intervalMs: number, tag: string): Promise<number> {
  const id = bench.submitCli(["sh", "-c", `sleep 0.4; echo poll-${tag}`]);
  const exitFile = bench.jobFile(id, "exit");
  await Bun.sleep(Math.random() * intervalMs);
  for (;;) {
    try {
      const seen = wallMs() - statSync(exitFile).mtimeMs;
      bench.liveJobs.delete(id);
      return seen;
    } catch {
      await Bun.sleep(intervalMs);
    }
  }
}

/** Bytes of the JSON-RPC responses (not notifications) the server sent in `entries`. */
export function responseBytes(entries: WireEntry[]): number {
  let bytes = 0;
  for (const e of entries) {
    if (e.dir !== "<<" || e.message.method !== undefined) continue;
    bytes += Buffer.byteLength(JSON.stringify(e.message));
  }
  return bytes;
}

export function printTable(rows: Row[], footer: string): void {
  const fmt = (value: number, unit: string) =>
    unit === "KiB" ? `${(value / 1024).toFixed(1)} KiB` : `${value.toFixed(1)} ${unit}`;
  const ratio = (r: Row) => {
    const x = r.median / r.baselineMedian;
    return `${x < 0.1 ? x.toFixed(3) : x.toFixed(2)}×`;
  };
  const header = ["measurement", "median", "baseline", "baseline median", "ratio", "target"];
  console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const r of rows) {
    const cells = [
      r.what,
      fmt(r.median, r.unit),
      r.baseline,
      fmt(r.baselineMedian, r.unit),
      ratio(r),
      r.target ?? "",
    ];
    console.log(`| ${cells.join(" | ")} |`);
  }
  console.log(`\n${footer}`);
}
