// Benchmarks of the Slurm backend on the test cluster (bash test/infra/slurm-up.sh, as root): scheduler calls per
// minute with 50 active jobs (one process; 5 MCP servers + 3 CLIs sharing the store: bench/slurm-multi.ts),
// completion-observed latency, submit latency. Medians and ratios against baselines measured in the same run,
// printed as bench/run.ts does.
// The event rows also run with the login node reached over the private sshd (as awl-dash), when sshd is available.
// Usage: bun bench/slurm.ts [--quick] [--multi-only | --event-only]   (needs dist/awaitless for the submit and multi-process rows)
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SlurmBackendId, slurmIdOf } from "../src/core/model/backend-id.ts";
import { CountingRunner, makeRig, type Rig, run } from "../test/e2e/slurm-harness.ts";
import { makeSshRig, SSH_CLUSTER } from "../test/e2e/slurm-ssh-rig.ts";
import { sshdAvailable, startSshd } from "../test/helpers/sshd.ts";
import { printRatioTable, type RatioRow } from "./ratio-table.ts";
import { multiProcessRows } from "./slurm-multi.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const POLL_MS = 2000; // a short slurm_poll_interval_seconds (the default is 15 s): more rounds per window
const multiOnly = process.argv.includes("--multi-only");
const eventOnly = process.argv.includes("--event-only");
const ACTIVE = 50;
const WINDOWS = quick ? 2 : 3;
const WINDOW_MS = quick ? 10_000 : 30_000;
const N_LATENCY = quick ? 4 : 10;
const N_SUBMIT = quick ? 5 : 15;
const N_EVENT = quick ? 2 : 4;
const eventRows: number[] = [];
const pollRows: number[] = [];

const rows: RatioRow[] = [];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bid = (rig: Rig, id: string): SlurmBackendId => slurmIdOf(rig.service.getJob(id)) ?? {};
const exitMtime = (rig: Rig, id: string) => statSync(join(bid(rig, id).remote_dir!, "exit")).mtimeMs;
const perMinute = (calls: number, ms: number) => (calls * 60_000) / ms;

const ping = await run(["scontrol", "ping"]).catch(() => undefined);
if (!ping || !/UP/.test(ping.stdout) || process.getuid?.() !== 0) {
  console.error(
    "bench/slurm.ts needs the test cluster up and root: sudo bash test/infra/slurm-up.sh, then rerun",
  );
  process.exit(2);
}

const submitTo = async (rig: Rig, argv: string[], host = "localhost") =>
  (
    await rig.service.submit({
      argv,
      backend: "slurm",
      host,
      // a remote login user cannot enter our temp dir: its job runs in its home
      ...(host === "localhost" ? { cwd: rig.root } : {}),
      allow_duplicate: true,
      slurm_options: { mem: host === "localhost" ? "16M" : "32M" },
    })
  ).job_id;

/** Exit → observed on the event path (60 s interval and floor): the median, and the squeue rounds after the exits. */
async function eventPath(rig: Rig, host: string, gate: string): Promise<[number, number]> {
  const got: number[] = [];
  const rounds: number[] = [];
  for (let i = 0; i < N_EVENT; i++) {
    const marker = join(gate, `go-${host}-${i}`);
    const id = await submitTo(rig, ["sh", "-c", `while [ ! -e ${marker} ]; do sleep 0.2; done`], host);
    const started = () =>
      bid(rig, id).remote_dir !== undefined && existsSync(join(bid(rig, id).remote_dir!, "started"));
    while (!started()) await sleep(100);
    const w = rig.service.wait(id, { timeoutMs: 120_000 });
    // a random point of the interval, as a real command's exit is
    await sleep(Math.random() * 5000);
    const t0 = Date.now();
    writeFileSync(marker, "");
    const r = await w;
    if (r.job_state !== "succeeded") throw new Error(`event bench job ${id}: ${r.job_state}`);
    got.push(Date.now() - exitMtime(rig, id));
    rounds.push(rig.runner.calls.filter((c) => c.atMs >= t0 && c.program === "squeue").length);
  }
  return [median(got), rounds.reduce((a, b) => a + b, 0)];
}

// 1. Scheduler calls per minute while 50 jobs are active (2 run on this 2-CPU node, the rest pend).
if (!multiOnly && !eventOnly) {
  const rig = makeRig({ pollIntervalMs: POLL_MS });
  const ids: string[] = [];
  for (let i = 0; i < ACTIVE; i++) ids.push(await submitTo(rig, ["sleep", "900"]));
  const slurmIds = ids.map((id) => bid(rig, id).slurm_job_id!);
  const ours: number[] = [];
  const naive: number[] = [];
  for (let w = 0; w < WINDOWS; w++) {
    // ours: every job has a waiter (as 50 agents would), all served by the cluster's one poller
    const since = Date.now();
    await Promise.all(ids.map((id) => rig.service.wait(id, { timeoutMs: WINDOW_MS })));
    const took = Date.now() - since;
    const calls = rig.runner.calls.filter(
      (c) => c.atMs >= since && (c.program === "squeue" || c.program === "sacct"),
    ).length;
    ours.push(perMinute(calls, took));
    // baseline: one squeue and one sacct per job per interval
    const counter = new CountingRunner();
    const start = Date.now();
    while (Date.now() - start < WINDOW_MS) {
      const round = Date.now();
      for (const s of slurmIds) {
        await counter.exec(["squeue", "-h", "-j", s, "-o", "%T"], { timeoutMs: 30_000 });
        await counter.exec(["sacct", "-X", "-n", "-P", "-o", "State,ExitCode", "-j", s], {
          timeoutMs: 30_000,
        });
      }
      await sleep(Math.max(0, POLL_MS - (Date.now() - round)));
    }
    naive.push(perMinute(counter.calls.length, Date.now() - start));
  }
  await run(["scancel", ...slurmIds]);
  rows.push({
    what: `scheduler calls per minute, ${ACTIVE} active jobs, ${POLL_MS / 1000} s interval`,
    median: median(ours),
    unit: "calls/min",
    baseline: "squeue + sacct per job per interval",
    baselineMedian: median(naive),
  });
  rig.close();
}

// 2. From the command's exit (the wrapper's exit record) to the job being observed terminal.
if (!multiOnly && !eventOnly) {
  const rig = makeRig({ pollIntervalMs: POLL_MS });
  const ours: number[] = [];
  const naive: number[] = [];
  for (let i = 0; i < N_LATENCY; i++) {
    const a = await submitTo(rig, ["sleep", "1"]);
    await rig.service.wait(a, { timeoutMs: 60_000 });
    ours.push(Date.now() - exitMtime(rig, a));
    // baseline: a script polling `squeue -j` at the same interval from a random phase, then `sacct` for the outcome
    const b = await submitTo(rig, ["sleep", "1"]);
    const s = bid(rig, b).slurm_job_id!;
    await sleep(Math.random() * POLL_MS);
    for (;;) {
      const q = await run(["squeue", "-h", "-j", `${s},${s}`, "-o", "%T"]);
      if (q.code === 0 && q.stdout.trim() === "") {
        const a2 = await run(["sacct", "-X", "-n", "-P", "-o", "State", "-j", s]);
        if (/^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY)/.test(a2.stdout.trim())) break;
      }
      await sleep(POLL_MS);
    }
    naive.push(Date.now() - exitMtime(rig, b));
  }
  rows.push({
    what: `command exit → observed terminal (${POLL_MS / 1000} s interval)`,
    median: median(ours),
    unit: "ms",
    baseline: "squeue -j poller, same interval, then sacct",
    baselineMedian: median(naive),
  });
  rig.close();
}

// 2b. Exit → observed with a 60 s poll interval (and floor): the event path (the login side watches the job directory,
// sacct for the one job confirms) against the poll path (slurm_watch = false: a plain exit waits for a round, or for
// exit_settle). Each job runs until its marker file exists, once its first round has covered it.
if (!multiOnly) {
  const gate = mkdtempSync(join(tmpdir(), "awl-bench-gate-"));
  chmodSync(gate, 0o755); // the SSH login user looks for the go files here
  for (const watch of [true, false]) {
    const rig = makeRig({ pollIntervalMs: 60_000, host: { slurm_watch: watch } });
    (watch ? eventRows : pollRows).push(...(await eventPath(rig, "localhost", gate)));
    rig.close();
  }
  rows.push({
    what: `command exit → observed terminal, 60 s interval (n=${N_EVENT}; squeue rounds after the exits: ${eventRows[1]} vs ${pollRows[1]})`,
    median: eventRows[0]!,
    unit: "ms",
    baseline: "the poll path (slurm_watch = false)",
    baselineMedian: pollRows[0]!,
  });
  if (sshdAvailable().ok) {
    // the login node over SSH (ssh2, the watch channel): against the same path on a local login node
    const sshd = await startSshd({ users: ["awl-dash"] });
    const rig = makeSshRig(sshd, { pollIntervalMs: 60_000 });
    try {
      const [ms, sshRounds] = await eventPath(rig, SSH_CLUSTER, gate);
      rows.push({
        what: `command exit → observed terminal over SSH (login node through the watch channel), 60 s interval (n=${N_EVENT}; squeue rounds after the exits: ${sshRounds})`,
        median: ms,
        unit: "ms",
        baseline: "the same on a local login node",
        baselineMedian: eventRows[0]!,
      });
    } finally {
      rig.close();
      await sshd.stop();
    }
  } else console.error(`[skip] the SSH event row: ${sshdAvailable().why}`);
  rmSync(gate, { recursive: true, force: true });
}

// 3. Submit latency through the binary: `awaitless submit --backend slurm` against a bare `sbatch --parsable`.
if (existsSync(BIN) && !multiOnly && !eventOnly) {
  const home = mkdtempSync(join(tmpdir(), "awl-bench-slurm-"));
  const config = join(home, "config.toml");
  writeFileSync(config, `[hosts.localhost]\nslurm_job_dir = "${join(home, "cluster")}"\n`);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    AWAITLESS_DATA_DIR: join(home, "data"),
    AWAITLESS_CONFIG: config,
    NO_COLOR: "1",
  };
  const timed = (argv: string[], stdin?: string) => {
    const t0 = performance.now();
    const r = Bun.spawnSync(argv, {
      env,
      cwd: home,
      stdout: "pipe",
      stderr: "pipe",
      ...(stdin ? { stdin: Buffer.from(stdin) } : {}),
    });
    const t = performance.now() - t0;
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr.toString()}`);
    return t;
  };
  const script = `#!/bin/sh\n#SBATCH --mem=16M\n#SBATCH --output=${join(home, "bare-%j.out")}\ntrue\n`;
  const ours: number[] = [];
  const bare: number[] = [];
  const args = ["submit", "--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=16M", "--"];
  timed([BIN, ...args, "true"]); // warm: prepares slurm_job_dir and installs the wrapper once
  for (let i = 0; i < N_SUBMIT; i++) {
    ours.push(timed([BIN, ...args, "true"]));
    bare.push(timed(["sbatch", "--parsable"], script));
  }
  rows.push({
    what: "awaitless submit --backend slurm (end to end)",
    median: median(ours),
    unit: "ms",
    baseline: "sbatch --parsable (script on stdin)",
    baselineMedian: median(bare),
  });
  rmSync(home, { recursive: true, force: true });
} else if (!multiOnly && !eventOnly)
  console.error(`${BIN} is missing: the submit row needs \`bun run build\` first`);

// 4. The same 50 jobs watched by 5 MCP servers and 3 CLIs at once (real processes on one store).
let multiNote = "";
if (existsSync(BIN) && !eventOnly) {
  const multi = await multiProcessRows(quick);
  rows.push(...multi.rows);
  multiNote = ` · ${multi.note}`;
}

printRatioTable(rows);
console.log(
  `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · Slurm test cluster (1 node) · ` +
    (multiOnly
      ? ""
      : eventOnly
        ? `60 s interval and floor, n=${N_EVENT} per path`
        : `${WINDOWS}×${WINDOW_MS / 1000} s windows, n=${N_LATENCY} latency, n=${N_EVENT} at 60 s, n=${N_SUBMIT} submits`) +
    `${quick ? " (quick)" : ""}${multiNote}`,
);
