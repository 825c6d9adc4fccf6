// Benchmarks of the compiled binary on the local backend. Prints medians and ratios against baselines
// measured in the same run (absolute times on a shared machine are noise; ratios are what to quote).
// Usage: bun run bench            (builds first)    bun bench/run.ts --quick   (fewer repetitions)
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plainSpec } from "../test/helpers/spec.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const N = quick ? 8 : 30;

const home = mkdtempSync(join(tmpdir(), "awl-bench-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  AWAITLESS_DATA_DIR: join(home, "data"),
  NO_COLOR: "1",
};

function ms(t0: number): number {
  return performance.now() - t0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function timeSpawn(argv: string[], extraEnv: Record<string, string> = {}): number {
  const t0 = performance.now();
  const r = Bun.spawnSync(argv, { env: { ...env, ...extraEnv }, stdout: "pipe", stderr: "pipe" });
  const t = ms(t0);
  if (r.exitCode !== 0 && argv[1] !== "wait")
    throw new Error(`${argv.join(" ")} failed: ${r.stderr.toString()}`);
  return t;
}

function repeat(n: number, f: () => number): number {
  f(); // warm the page cache
  return median(Array.from({ length: n }, f));
}

interface Row {
  what: string;
  median: number;
  unit: string;
  baseline: string;
  baselineMedian: number;
  target?: string;
}
const rows: Row[] = [];

function submit(args: string[]): string {
  const r = Bun.spawnSync([BIN, "submit", "--json", "--", ...args], { env, stdout: "pipe" });
  return JSON.parse(r.stdout.toString()).job_id;
}

// 1. Cold start.
const spawnFloor = repeat(N, () => timeSpawn(["/bin/true"]));
rows.push({
  what: "awaitless version (cold start)",
  median: repeat(N, () => timeSpawn([BIN, "version"])),
  unit: "ms",
  baseline: "spawn /bin/true",
  baselineMedian: spawnFloor,
  target: "≤ 40 ms",
});
const doneId = submit(["true"]);
Bun.spawnSync([BIN, "wait", doneId], { env });
rows.push({
  what: "awaitless status <id> (cold start)",
  median: repeat(N, () => timeSpawn([BIN, "status", doneId])),
  unit: "ms",
  baseline: "spawn /bin/true",
  baselineMedian: spawnFloor,
  target: "≤ 40 ms",
});

// 2. run -- true end to end.
const shTrue = repeat(N, () => timeSpawn(["/bin/sh", "-c", "true"]));
rows.push({
  what: "awaitless run -- true (end to end)",
  median: repeat(N, () => timeSpawn([BIN, "run", "--", "true"])),
  unit: "ms",
  baseline: "sh -c true",
  baselineMedian: shTrue,
  target: "≤ 100 ms",
});

// 3. From the command's exit to `wait` returning, against a 2 s fixed-interval poller.
async function exitToWait(): Promise<number> {
  const id = submit(["sleep", "0.4"]);
  const dir = join(env.AWAITLESS_DATA_DIR, "jobs", id);
  const p = Bun.spawn([BIN, "wait", id], { env, stdout: "ignore", stderr: "ignore" });
  await p.exited;
  const returnedAt = Date.now();
  // The exit record is written right after the command exits; its mtime is the exit time (ms resolution).
  return returnedAt - statSync(join(dir, "exit")).mtimeMs;
}
async function exitToPoll(intervalMs: number): Promise<number> {
  const id = submit(["sleep", "0.4"]);
  const exitFile = join(env.AWAITLESS_DATA_DIR, "jobs", id, "exit");
  // A naive poller started at an arbitrary phase checks the file every intervalMs.
  await Bun.sleep(Math.random() * intervalMs);
  for (;;) {
    try {
      return Date.now() - statSync(exitFile).mtimeMs;
    } catch {
      await Bun.sleep(intervalMs);
    }
  }
}
const waits: number[] = [];
const polls: number[] = [];
for (let i = 0; i < (quick ? 5 : 12); i++) {
  waits.push(await exitToWait());
  polls.push(await exitToPoll(2000));
}
rows.push({
  what: "command exit → wait returns",
  median: median(waits),
  unit: "ms",
  baseline: "2 s fixed-interval poller",
  baselineMedian: median(polls),
  target: "≤ 50 ms",
});

// 4. Submits: 1000 sequential, 20-way parallel.
const nSeq = quick ? 100 : 1000;
let t0 = performance.now();
for (let i = 0; i < nSeq; i++) Bun.spawnSync([BIN, "submit", "--", "true"], { env, stdout: "ignore" });
const seqPer = ms(t0) / nSeq;
rows.push({
  what: `${nSeq} sequential submits (per submit)`,
  median: seqPer,
  unit: "ms",
  baseline: "spawn /bin/true",
  baselineMedian: spawnFloor,
});
const nPar = quick ? 100 : 1000;
t0 = performance.now();
for (let i = 0; i < nPar / 20; i++) {
  await Promise.all(
    Array.from(
      { length: 20 },
      () => Bun.spawn([BIN, "submit", "--", "true"], { env, stdout: "ignore" }).exited,
    ),
  );
}
rows.push({
  what: `${nPar} submits, 20 in parallel (per submit)`,
  median: ms(t0) / nPar,
  unit: "ms",
  baseline: "sequential submit",
  baselineMedian: seqPer,
});

// 5. list over 100 000 jobs.
const bigDir = join(home, "big");
mkdirSync(bigDir);
Bun.spawnSync([BIN, "list"], { env: { ...env, AWAITLESS_DATA_DIR: bigDir } }); // creates the schema
const emptyList = repeat(N, () => timeSpawn([BIN, "list"], { AWAITLESS_DATA_DIR: bigDir }));
{
  const db = new Database(join(bigDir, "store.db"));
  const spec = JSON.stringify(plainSpec());
  const ins = db.prepare(
    "INSERT INTO jobs (job_id, backend, state, spec_json, fingerprint, created_at, finished_at, job_dir, exit_code) VALUES (?,?,?,?,?,?,?,?,?)",
  );
  const base = Date.now() - 100_000_000;
  db.transaction(() => {
    for (let i = 0; i < 100_000; i++) {
      const t = base + i * 1000;
      const id = `job_${t.toString(32).toUpperCase().padStart(10, "0")}${String(i).padStart(16, "0")}`;
      ins.run(
        id,
        "local",
        "succeeded",
        spec,
        "x",
        new Date(t).toISOString(),
        new Date(t).toISOString(),
        "/nonexistent",
        0,
      );
    }
  })();
  db.close();
}
rows.push({
  what: "list (20 newest) over 100 000 jobs",
  median: repeat(N, () => timeSpawn([BIN, "list"], { AWAITLESS_DATA_DIR: bigDir })),
  unit: "ms",
  baseline: "list on an empty store",
  baselineMedian: emptyList,
  target: "≤ 50 ms",
});

// 6. gc with the store quota: it sizes every job directory. 20 000 finished jobs of 8 small files each.
const gcDir = join(home, "gc");
mkdirSync(gcDir);
Bun.spawnSync([BIN, "list"], { env: { ...env, AWAITLESS_DATA_DIR: gcDir } });
{
  const db = new Database(join(gcDir, "store.db"));
  const spec = JSON.stringify(plainSpec());
  const ins = db.prepare(
    "INSERT INTO jobs (job_id, backend, state, spec_json, fingerprint, created_at, finished_at, job_dir, exit_code) VALUES (?,?,?,?,?,?,?,?,?)",
  );
  const base = Date.now() - 100_000_000;
  const files = ["spec.sh", "started", "heartbeat", "exit", "stdout", "stderr", "wrapper.log", "progress"];
  db.transaction(() => {
    for (let i = 0; i < 20_000; i++) {
      const t = base + i * 1000;
      const id = `job_${t.toString(32).toUpperCase().padStart(10, "0")}${String(i).padStart(16, "0")}`;
      const jobDir = join(gcDir, "jobs", id);
      mkdirSync(jobDir, { recursive: true });
      for (const f of files) writeFileSync(join(jobDir, f), "x".repeat(100));
      const at = new Date(t).toISOString();
      ins.run(id, "local", "succeeded", spec, "x", at, at, jobDir, 0);
    }
  })();
  db.close();
}
const gcArgs = (maxBytes: string) => [
  BIN,
  "gc",
  "--dry-run",
  "--keep",
  "1000000",
  "--older-than",
  "100000d",
  "--max-bytes",
  maxBytes,
];
const gcRuns = quick ? 3 : 7;
rows.push({
  what: "gc --dry-run, store quota, 20 000 finished jobs",
  median: repeat(gcRuns, () => timeSpawn(gcArgs("10GiB"), { AWAITLESS_DATA_DIR: gcDir })),
  unit: "ms",
  baseline: "the same gc without a quota (--max-bytes 0)",
  baselineMedian: repeat(gcRuns, () => timeSpawn(gcArgs("0"), { AWAITLESS_DATA_DIR: gcDir })),
});

rmSync(home, { recursive: true, force: true });

const header = ["measurement", "median", "baseline", "baseline median", "ratio", "target"];
const table = rows.map((r) => [
  r.what,
  `${r.median.toFixed(1)} ${r.unit}`,
  r.baseline,
  `${r.baselineMedian.toFixed(1)} ${r.unit}`,
  `${(r.median / r.baselineMedian).toFixed(2)}×`,
  r.target ?? "",
]);
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const row of table) console.log(`| ${row.join(" | ")} |`);
console.log(
  `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · n=${N}${quick ? " (quick)" : ""}`,
);
