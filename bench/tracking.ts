// What tracking a job's whole process tree costs (wrapper.sh "The whole job"): the wrapper run directly on a job
// directory, as a launcher starts it, for three jobs — `true` (nothing left: start to exit record), a command that
// leaves a background `sleep` (command start to exit record, the leftover stopped), and a cancel of `sleep` with an
// escaped `setsid sleep` beside it (the cancel request to the exit record) — under the wrapper of this checkout with
// a cgroup (needs root or a delegated cgroup v2 subtree; else that row says why not) and by environment
// (AWAITLESS_TRACKING=environment), against the wrapper and cancel.sh of a base commit, which track nothing (the
// baseline: its leftover and escaped sleeps are killed by the bench afterwards). Runs interleave; medians of --runs.
// Usage: bun bench/tracking.ts [--runs 20] [--base 88c42c3] [--shell dash]
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newJobId } from "../src/core/model/ids.ts";
import { renderSpec } from "../src/wrapper/protocol.ts";
import { CANCEL_TEXT, WRAPPER_TEXT } from "../src/wrapper/scripts.ts";
import { printRatioTable, type RatioRow } from "./ratio-table.ts";

const opt = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
};
const RUNS = Number(opt("--runs", "20"));
const BASE = opt("--base", "88c42c3");
const SHELL = opt("--shell", "dash");
const ROOT = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "awl-bench-tracking-"));

/** The base commit's wrapper and cancel.sh, assembled with that commit's prelude (they splice nothing else). */
function baseScripts(): { wrapper: string; cancel: string } {
  const show = (path: string) => {
    const r = spawnSync("git", ["-C", ROOT, "show", `${BASE}:${path}`], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`git show ${BASE}:${path} failed: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const prelude = show("src/wrapper/prelude.sh").replace(/^# shellcheck shell=\w+\n/m, "");
  const splice = (text: string) => text.replace("# awaitless:include prelude.sh\n", prelude);
  return { wrapper: splice(show("src/wrapper/wrapper.sh")), cancel: splice(show("src/wrapper/cancel.sh")) };
}

interface Variant {
  name: string;
  wrapper: string;
  cancel: string;
  env: Record<string, string>;
}

const base = baseScripts();
writeFileSync(join(work, "base-wrapper.sh"), base.wrapper);
mkdirSync(join(work, "bin"));
// launchers name it bin/wrapper-HASH.sh: a wrapper is known by its command line (prelude's awl_is_wrapper_of)
writeFileSync(join(work, "bin", "wrapper-bench.sh"), WRAPPER_TEXT);
const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const VARIANTS: Variant[] = [
  {
    name: `no tracking (${BASE})`,
    wrapper: join(work, "base-wrapper.sh"),
    cancel: base.cancel,
    env: baseEnv,
  },
  { name: "cgroup", wrapper: join(work, "bin", "wrapper-bench.sh"), cancel: CANCEL_TEXT, env: baseEnv },
  {
    name: "environment",
    wrapper: join(work, "bin", "wrapper-bench.sh"),
    cancel: CANCEL_TEXT,
    env: { ...baseEnv, AWAITLESS_TRACKING: "environment" },
  },
];

interface Job {
  id: string;
  dir: string;
}

function newJobDir(argv: string[]): Job {
  const id = newJobId();
  const dir = join(work, "jobs", id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(dir, "spec.sh"),
    renderSpec({ jobId: id, cwd: "/tmp", argv, env: {}, graceSeconds: 10 }),
  );
  return { id, dir };
}

function startWrapper(v: Variant, job: Job): void {
  const child = spawn(SHELL, [v.wrapper, job.dir], { detached: true, stdio: "ignore", env: v.env });
  child.unref();
}

async function until(what: string, ok: () => boolean, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(1);
  }
}

const exists = (job: Job, name: string) => () => existsSync(join(job.dir, name));

/** `true`: from the wrapper's start to its exit record. */
async function plainEnd(v: Variant): Promise<number> {
  const job = newJobDir(["true"]);
  const t0 = performance.now();
  startWrapper(v, job);
  await until("the exit record", exists(job, "exit"));
  return performance.now() - t0;
}

/** A command leaving a background sleep: from its start (`started`) to the exit record. */
async function leftoverEnd(v: Variant): Promise<number> {
  const job = newJobDir(["sh", "-c", 'sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/bg"; sleep 0.2']);
  startWrapper(v, job);
  await until("started", exists(job, "started"));
  const t0 = performance.now();
  await until("the exit record", exists(job, "exit"));
  const ms = performance.now() - t0;
  killPidFile(job, "bg");
  return ms - 200;
}

/** A running `sleep` and an escaped `setsid sleep`: from cancel.sh's start to the exit record. */
async function cancelEnd(v: Variant): Promise<number> {
  const job = newJobDir([
    "sh",
    "-c",
    'setsid sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/esc"; echo ready; exec sleep 300',
  ]);
  startWrapper(v, job);
  await until(
    "the command's ready",
    () =>
      existsSync(join(job.dir, "stdout")) && readFileSync(join(job.dir, "stdout"), "utf8").includes("ready"),
  );
  await until("the monitor's trap", () => monitorReady(job));
  const t0 = performance.now();
  spawnSync(SHELL, ["-c", v.cancel, "awaitless-cancel", job.dir, "10", "", job.id], { env: v.env });
  await until("the exit record", exists(job, "exit"));
  const ms = performance.now() - t0;
  killPidFile(job, "esc");
  return ms;
}

/** The monitor handles USR2 (cancel.sh wakes only such a monitor; otherwise it acts at its next tick). */
function monitorReady(job: Job): boolean {
  try {
    const m = /^monitor_pid=(\d+)$/m.exec(readFileSync(join(job.dir, "started"), "utf8"))?.[1];
    const status = readFileSync(`/proc/${m}/status`, "utf8");
    const cgt = /^SigCgt:\s+([0-9a-f]+)$/m.exec(status)?.[1] ?? "0";
    return (BigInt(`0x${cgt}`) & 2048n) !== 0n;
  } catch {
    return false;
  }
}

function killPidFile(job: Job, name: string): void {
  try {
    process.kill(Number(readFileSync(join(job.dir, name), "utf8")), "SIGKILL");
  } catch {
    // stopped by the wrapper already
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** Whether the cgroup variant really gets a cgroup here (else its row says why). */
function cgroupWhy(): string | null {
  const job = newJobDir(["true"]);
  spawnSync(SHELL, [VARIANTS[1]!.wrapper, job.dir], { env: baseEnv });
  const started = readFileSync(join(job.dir, "started"), "utf8");
  if (/^tracking=cgroup$/m.test(started)) return null;
  const log = readFileSync(join(job.dir, "wrapper.log"), "utf8");
  return /tracking the job's processes (.*)$/m.exec(log)?.[1] ?? "no cgroup";
}

const why = cgroupWhy();
const cases: [string, (v: Variant) => Promise<number>][] = [
  ["`true`, start to exit record", plainEnd],
  ["a background sleep left, command start to exit record", leftoverEnd],
  ["cancel with an escaped setsid sleep, request to exit record", cancelEnd],
];
const times = new Map<string, number[]>();
try {
  for (let run = 0; run < RUNS; run++) {
    for (const [what, fn] of cases) {
      for (const v of VARIANTS) {
        if (v.name === "cgroup" && why) continue;
        const key = `${what}|${v.name}`;
        times.set(key, [...(times.get(key) ?? []), await fn(v)]);
      }
    }
  }
  console.log(`${RUNS} runs each, ${SHELL}, interleaved; baseline: the wrapper of ${BASE} (tracks nothing)`);
  if (why) console.log(`cgroup: not measured here (${why})`);
  const rows: RatioRow[] = [];
  for (const [what] of cases) {
    const baseline = median(times.get(`${what}|${VARIANTS[0]!.name}`) ?? []);
    for (const v of VARIANTS.slice(1)) {
      const xs = times.get(`${what}|${v.name}`);
      if (!xs) continue;
      rows.push({
        what: `${what}: ${v.name}`,
        median: median(xs),
        unit: "ms",
        baseline: VARIANTS[0]!.name,
        baselineMedian: baseline,
      });
    }
  }
  printRatioTable(rows);
} finally {
  rmSync(work, { recursive: true, force: true });
}
