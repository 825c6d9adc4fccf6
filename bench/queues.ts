// What a long line of queue waiters costs: `submit --array 0-(W-1)%2` of tasks that wait for a go file (every task
// launched, W-2 of them waiting in the array's private queue), then the CPU all wrappers use while the line is idle
// (utime+stime, their reaped children's included, from /proc over a window that starts --settle seconds after the
// submit), then the drain once the go file exists.
// Against another build (AWAITLESS_BENCH_BIN, e.g. one of the base commit) with --against BIN, it prints both and
// the ratios. A submit slower than --submit-limit seconds is stopped and counted as that limit.
// Usage: bun run build && bun bench/queues.ts [--w 200,1000] [--runs 1] [--settle 30] [--window 30] [--against OTHER_BIN]
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.AWAITLESS_BENCH_BIN ?? join(ROOT, "dist", "awaitless");
const opt = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
};
const SIZES = opt("--w", "200,1000").split(",").map(Number);
const RUNS = Number(opt("--runs", "1"));
const SETTLE_S = Number(opt("--settle", "30"));
const WINDOW_S = Number(opt("--window", "30"));
const SUBMIT_LIMIT_S = Number(opt("--submit-limit", "240"));
const AGAINST = opt("--against", "");
const TICKS = 100; // USER_HZ on Linux

interface Run {
  submitS: number;
  submitCapped: boolean;
  idleCpuPct: number;
  drainS: number | null;
}

function sandbox(): { home: string; env: Record<string, string>; remove(): void } {
  const home = mkdtempSync(join(tmpdir(), "awl-bench-queues-"));
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    AWAITLESS_DATA_DIR: join(home, "data"),
    AWAITLESS_CONFIG: join(home, "config.toml"),
    NO_COLOR: "1",
  };
  writeFileSync(env.AWAITLESS_CONFIG, "");
  return { home, env, remove: () => rmSync(home, { recursive: true, force: true }) };
}

/** Pids of the processes whose command line names the sandbox: the wrappers and their monitors (tasksToo: the tasks). */
function wrappers(home: string, tasksToo = false): number[] {
  const pids: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8");
      if (cmd.includes(home) && (tasksToo || !cmd.includes("while ["))) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** utime+stime+cutime+cstime of each pid, in ticks. */
function cpu(pids: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of pids) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      m.set(p, Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
    } catch {
      // gone meanwhile
    }
  }
  return m;
}

async function one(bin: string, w: number): Promise<Run> {
  const sb = sandbox();
  const go = join(sb.home, "go");
  try {
    const t0 = performance.now();
    const sub = Bun.spawn(
      [
        bin,
        "submit",
        "--array",
        `0-${w - 1}%2`,
        "--",
        "sh",
        "-c",
        `while [ ! -e '${go}' ]; do sleep 0.2; done`,
      ],
      { env: sb.env, stdout: "pipe", stderr: "pipe" },
    );
    const timer = setTimeout(() => sub.kill(), SUBMIT_LIMIT_S * 1000);
    const code = await sub.exited;
    clearTimeout(timer);
    const submitS = (performance.now() - t0) / 1000;
    const submitCapped = code !== 0;
    const id = (await new Response(sub.stdout).text()).trim();
    await Bun.sleep(SETTLE_S * 1000);
    const pids = wrappers(sb.home);
    const a = cpu(pids);
    await Bun.sleep(WINDOW_S * 1000);
    const b = cpu(pids);
    let ticks = 0;
    for (const [p, t] of b) ticks += t - (a.get(p) ?? t);
    const idleCpuPct = (100 * ticks) / TICKS / WINDOW_S;
    let drainS: number | null = null;
    if (!submitCapped) {
      const t1 = performance.now();
      writeFileSync(go, "");
      const r = Bun.spawnSync([bin, "wait", "--timeout", `${SUBMIT_LIMIT_S}s`, id], { env: sb.env });
      if (r.exitCode === 0) drainS = (performance.now() - t1) / 1000;
    }
    return { submitS, submitCapped, idleCpuPct, drainS };
  } finally {
    writeFileSync(go, "");
    // the tasks too: with the sandbox removed they would never see their go file
    for (const p of wrappers(sb.home, true)) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // ended meanwhile
      }
    }
    if (existsSync(sb.home)) sb.remove();
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] ?? Number.NaN);
};

async function series(
  bin: string,
  w: number,
): Promise<{ submit: string; cpu: number; drain: number | null; s: number }> {
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await one(bin, w));
  const s = median(runs.map((r) => r.submitS));
  const capped = runs.some((r) => r.submitCapped);
  const drains = runs.map((r) => r.drainS).filter((d): d is number => d !== null);
  return {
    s,
    submit: `${capped ? ">" : ""}${s.toFixed(1)} s`,
    cpu: median(runs.map((r) => r.idleCpuPct)),
    drain: drains.length === runs.length ? median(drains) : null,
  };
}

const rows: string[][] = [["W waiters (%2)", "build", "submit", "idle CPU (% of a core)", "drain"]];
for (const w of SIZES) {
  const now = await series(BIN, w);
  rows.push([
    String(w),
    "this",
    now.submit,
    now.cpu.toFixed(1),
    now.drain === null ? "-" : `${now.drain.toFixed(1)} s`,
  ]);
  if (AGAINST) {
    const old = await series(AGAINST, w);
    rows.push([
      String(w),
      "other",
      old.submit,
      old.cpu.toFixed(1),
      old.drain === null ? "-" : `${old.drain.toFixed(1)} s`,
    ]);
    rows.push([
      String(w),
      "ratio other/this",
      `${(old.s / now.s).toFixed(1)}x`,
      `${(old.cpu / Math.max(now.cpu, 0.1)).toFixed(1)}x`,
      old.drain !== null && now.drain !== null ? `${(old.drain / now.drain).toFixed(1)}x` : "-",
    ]);
  }
}
const width = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(width[i]!)).join("  "));
console.log(
  `runs: ${RUNS}, idle window: ${WINDOW_S} s from ${SETTLE_S} s after the submit, medians; ${new Date().toISOString()}`,
);
