// The multi-process scheduler call count of bench/slurm.ts: 5 MCP servers + 3 waiting CLIs over 50 active Slurm jobs
// on one store, against one MCP server alone, and against the same 8 processes each on its own copy of the store (no
// shared rounds: every process polls on its own). squeue/sacct calls are counted by wrappers first on PATH.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobStore } from "../src/core/store/job-store.ts";
import { CallLog } from "../test/e2e/slurm-call-log.ts";
import { run } from "../test/e2e/slurm-harness.ts";
import { BINARY, connectStdio, makeSandbox } from "../test/mcp/stdio-client.ts";
import type { RatioRow } from "./ratio-table.ts";

type Conn = Awaited<ReturnType<typeof connectStdio>>;

export type MultiRow = RatioRow;

const MCP_SERVERS = 5;
const CLIS = 3;
const JOBS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One MCP server holding wait_for_job on each of its jobs (called again after each client_timeout) until `endMs`. */
async function holdAll(conn: Conn, ids: string[], endMs: number): Promise<void> {
  await Promise.all(
    ids.map(async (id) => {
      while (Date.now() < endMs - 1000) {
        const s = Math.max(1, Math.min(50, Math.floor((endMs - Date.now()) / 1000)));
        await conn.client
          .callTool(
            { name: "wait_for_job", arguments: { job_id: id, timeout_seconds: s } },
            { timeout: 120_000 },
          )
          .catch(() => undefined);
      }
    }),
  );
}

interface Scenario {
  servers: number;
  clis: number;
  /** Each process gets its own data directory (a copy of the store): no shared rounds. */
  ownStores: boolean;
}

/** Scheduler calls per minute over `windowMs` while the scenario's processes wait on every job. */
async function measure(
  box: ReturnType<typeof makeSandbox>,
  log: CallLog,
  ids: string[],
  slurmIds: string[],
  sc: Scenario,
  windowMs: number,
  warmMs: number,
): Promise<number> {
  const envFor = (i: number): Record<string, string> => {
    if (!sc.ownStores) return box.env;
    const dir = join(box.root, `own-${Date.now()}-${i}`);
    mkdirSync(dir, { recursive: true });
    const src = JobStore.open(box.env.AWAITLESS_DATA_DIR!);
    src.copyTo(join(dir, "store.db"));
    src.close();
    return { ...box.env, AWAITLESS_DATA_DIR: dir };
  };
  const endMs = Date.now() + warmMs + windowMs;
  const conns: Conn[] = [];
  const clis: ReturnType<typeof Bun.spawn>[] = [];
  try {
    for (let i = 0; i < sc.servers; i++)
      conns.push(await connectStdio("modern", envFor(i), box.root, `bench-${i}`));
    for (let i = 0; i < sc.clis; i++) {
      clis.push(
        Bun.spawn([BINARY, "completions", "--drain", "--json", ...ids], {
          env: envFor(sc.servers + i),
          cwd: box.root,
          stdout: "ignore",
          stderr: "ignore",
        }),
      );
    }
    // the servers split the jobs between them (each agent waits on its own); every CLI watches all of them
    const per = Math.ceil(ids.length / sc.servers);
    const holds = conns.map((c, i) => holdAll(c, ids.slice(i * per, (i + 1) * per), endMs));
    // warm-up: every process has made its first observation of its jobs
    await sleep(warmMs);
    const t0 = Date.now();
    await sleep(windowMs);
    const t1 = Date.now();
    const calls = log
      .calls(t0)
      .filter((c) => c.atMs < t1 && (c.program === "squeue" || c.program === "sacct"));
    // every job is still active (they sleep for 15 min): each call asked about some of these jobs
    if (!calls.every((c) => slurmIds.some((s) => c.args.includes(s))))
      throw new Error("a squeue/sacct call that names none of the bench's jobs");
    if (clis.some((p) => p.exitCode !== null)) throw new Error("a waiting CLI ended before the window did");
    for (const p of clis) p.kill("SIGKILL");
    await Promise.all(holds);
    return (calls.length * 60_000) / (t1 - t0);
  } finally {
    for (const p of clis) p.kill("SIGKILL");
    for (const c of conns) await c.close();
  }
}

export async function multiProcessRows(quick: boolean): Promise<{ rows: MultiRow[]; note: string }> {
  const box = makeSandbox();
  const log = new CallLog(join(box.root, "calls"));
  box.env.PATH = log.path();
  // the defaults a user gets (slurm_poll_interval_seconds, slurm_min_poll_interval_seconds): nothing set here
  writeFileSync(
    box.env.AWAITLESS_CONFIG!,
    `[hosts.localhost]\nslurm_job_dir = "${join(box.root, "cluster")}"\n`,
  );
  const ids: string[] = [];
  const slurmIds: string[] = [];
  try {
    for (let i = 0; i < JOBS; i++) {
      const r = Bun.spawnSync(
        [
          BINARY,
          "submit",
          "--json",
          "--backend",
          "slurm",
          "--host",
          "localhost",
          "--slurm-option",
          "mem=16M",
          "--",
        ].concat(["sleep", "900"]),
        { env: box.env, cwd: box.root, stdout: "pipe", stderr: "pipe" },
      );
      if (r.exitCode !== 0) throw new Error(`submit failed: ${r.stderr.toString()}`);
      const j = JSON.parse(r.stdout.toString()) as { job_id: string };
      ids.push(j.job_id);
      const st = JSON.parse(
        Bun.spawnSync([BINARY, "status", "--json", j.job_id], {
          env: box.env,
          stdout: "pipe",
        }).stdout.toString(),
      ) as { backend_id: { slurm_job_id: string } };
      slurmIds.push(st.backend_id.slurm_job_id);
    }
    const windowMs = quick ? 45_000 : 120_000;
    const warmMs = 20_000;
    const many = { servers: MCP_SERVERS, clis: CLIS, ownStores: false };
    const shared = await measure(box, log, ids, slurmIds, many, windowMs, warmMs);
    const one = await measure(
      box,
      log,
      ids,
      slurmIds,
      { servers: 1, clis: 0, ownStores: false },
      windowMs,
      warmMs,
    );
    const own = await measure(box, log, ids, slurmIds, { ...many, ownStores: true }, windowMs, warmMs);
    const who = `${MCP_SERVERS} MCP servers + ${CLIS} waiting CLIs, ${JOBS} active jobs`;
    return {
      rows: [
        {
          what: `scheduler calls per minute, ${who}, one store`,
          median: shared,
          unit: "calls/min",
          baseline: "one MCP server waiting on all 50",
          baselineMedian: one,
        },
        {
          what: `scheduler calls per minute, ${who}, one store`,
          median: shared,
          unit: "calls/min",
          baseline: "the same 8 processes, each on its own store (no shared rounds)",
          baselineMedian: own,
        },
      ],
      note: `multi-process rows: default intervals (15 s, floor 5 s), one ${windowMs / 1000} s window each after ${warmMs / 1000} s warm-up`,
    };
  } finally {
    // the jobs sleep for 15 min: a scancel refused (the controller restarting) is retried, and said if it stays so
    for (let i = 0; i < 5 && slurmIds.length > 0; i++) {
      const r = await run(["scancel", ...slurmIds]).catch((e: Error) => ({ code: -1, stderr: e.message }));
      if (r.code === 0) break;
      if (i === 4)
        console.error(`scancel ${slurmIds.join(" ")} failed: ${r.stderr.trim()}; cancel them by hand`);
      else await sleep(3000);
    }
    box.remove();
  }
}
