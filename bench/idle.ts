// What idle jobs cost: CPU and memory (PSS) of N quiet jobs against N `nohup sleep` processes (the floor) in the same
// run, locally and on a private sshd host (test/helpers/sshd.ts; needs root); cancel latency and timeout precision of
// jobs that have been quiet long enough for their monitor to back off; the CPU of an MCP server and of a waiting CLI
// while 100 jobs are active. CPU is read from /proc (utime+stime of every process of a job's two sessions, plus what
// they reaped), so other load on the machine does not count.
// Usage: bun run build && bun bench/idle.ts [--quick] [--no-ssh]   AWAITLESS_BENCH_BIN=/path/to/awaitless: another
// build; AWAITLESS_SHELL=bash: the local jobs' shell; AWAITLESS_BENCH_PATH: the PATH the local jobs get.
// `--by-age [--minutes M]`: only a quiet local job's CPU for each minute of its age (bench/idle-age.ts; default 4).
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sshdAvailable } from "../test/helpers/sshd.ts";
import { connectStdio } from "../test/mcp/stdio-client.ts";
import { cpuByAge } from "./idle-age.ts";
import { allProcs, jobSessions, pss } from "./proc-cpu.ts";
import { startBenchSshd } from "./sshd.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.AWAITLESS_BENCH_BIN ?? join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const noSsh = process.argv.includes("--no-ssh");
const N_LOCAL = quick ? 20 : 100;
const N_SSH = quick ? 10 : 50;
const K = quick ? 3 : 8; // cancel and timeout samples
const WINDOW_S = quick ? 40 : 60; // CPU is counted in 10 ms ticks: shorter windows read 0
const SETTLE_S = 20; // quiet long enough for the monitor's checks to back off
const TIMEOUT_S = SETTLE_S + 5;
const HZ = 100; // USER_HZ on Linux

const home = mkdtempSync(join(tmpdir(), "awl-bench-idle-"));
const env: Record<string, string> = {
  PATH: process.env.AWAITLESS_BENCH_PATH ?? process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  AWAITLESS_DATA_DIR: join(home, "data"),
  AWAITLESS_CONFIG: join(home, "config.toml"),
  NO_COLOR: "1",
  // The wrapper's shell and PATH (e.g. AWAITLESS_SHELL=bash, or busybox sh with a PATH of busybox applets only).
  ...(process.env.AWAITLESS_SHELL ? { AWAITLESS_SHELL: process.env.AWAITLESS_SHELL } : {}),
};
writeFileSync(env.AWAITLESS_CONFIG!, "");
const jobsDir = join(env.AWAITLESS_DATA_DIR!, "jobs");
const wallMs = (): number => performance.timeOrigin + performance.now();
const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

async function cli(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  const p = Bun.spawn([BIN, ...args], { env: { ...env, ...extraEnv }, stdout: "pipe", stderr: "pipe" });
  const [out, errText, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  if (code !== 0 && args[0] !== "cancel") throw new Error(`awaitless ${args.join(" ")}: ${code} ${errText}`);
  return out;
}

async function submit(argv: string[], extra: string[] = []): Promise<string> {
  return (JSON.parse(await cli(["submit", "--json", ...extra, "--", ...argv])) as { job_id: string }).job_id;
}

async function until<T>(what: string, f: () => T | undefined, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleepMs(50);
  }
}

interface Group {
  name: string;
  sessions: Set<number>;
  pids: Set<number>;
}

function snapshot(groups: Group[]): Map<string, { ticks: number; pss: number; procs: number }> {
  const procs = allProcs();
  const out = new Map<string, { ticks: number; pss: number; procs: number }>();
  for (const g of groups) {
    let ticks = 0;
    let mem = 0;
    let n = 0;
    for (const p of procs) {
      if (!g.sessions.has(p.sid) && !g.pids.has(p.pid)) continue;
      ticks += p.ticks;
      mem += pss(p.pid);
      n++;
    }
    out.set(g.name, { ticks, pss: mem, procs: n });
  }
  return out;
}

async function startFloor(n: number, user?: string): Promise<number[]> {
  const script = `for i in $(seq ${n}); do nohup sleep 3600 >/dev/null 2>&1 & echo $!; done`;
  const argv = user ? ["su", "-s", "/bin/sh", user, "-c", script] : ["sh", "-c", script];
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "ignore" });
  return (await new Response(p.stdout).text()).trim().split("\n").map(Number);
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

// A command that records when TERM reached it (got_term's mtime: busybox `date` has no %N), then exits.
const TERM_PROBE = [
  "sh",
  "-c",
  'trap \': >"$AWAITLESS_JOB_DIR/got_term"; exit 0\' TERM; : >"$AWAITLESS_JOB_DIR/ready"; sleep 3600 & wait',
];

interface Row {
  what: string;
  value: string;
  floor: string;
  ratio: string;
}
const rows: Row[] = [];
const cleanup: Array<() => void | Promise<void>> = [];

function cpuRows(
  label: string,
  n: number,
  before: Map<string, { ticks: number }>,
  after: Map<string, { ticks: number; pss: number; procs: number }>,
  seconds: number,
): void {
  const perJob = (g: string) => ((after.get(g)!.ticks - before.get(g)!.ticks) / HZ / n) * (60 / seconds);
  const jobs = perJob(`${label} jobs`);
  const floor = perJob(`${label} floor`);
  rows.push({
    what: `${label}: CPU per idle job (ms per second)`,
    value: ((jobs * 1000) / 60).toFixed(3),
    floor: ((floor * 1000) / 60).toFixed(3),
    ratio: floor > 0 ? `${(jobs / floor).toFixed(0)}×` : "floor 0",
  });
  rows.push({
    what: `${label}: CPU seconds per job per minute`,
    value: jobs.toFixed(4),
    floor: floor.toFixed(4),
    ratio: floor > 0 ? `${(jobs / floor).toFixed(0)}×` : "floor 0",
  });
  const a = after.get(`${label} jobs`)!;
  const f = after.get(`${label} floor`)!;
  rows.push({
    what: `${label}: PSS per job, processes per job`,
    value: `${(a.pss / n / 1024).toFixed(2)} MiB, ${(a.procs / n).toFixed(1)}`,
    floor: `${(f.pss / n / 1024).toFixed(2)} MiB, ${(f.procs / n).toFixed(1)}`,
    ratio: `${(a.pss / f.pss).toFixed(1)}×`,
  });
}

async function cancelLatencies(ids: string[], dirOf: (id: string) => string): Promise<number[]> {
  const out: number[] = [];
  for (const id of ids) {
    const t0 = wallMs();
    await cli(["cancel", id]);
    const got = await until(`TERM reaching ${id}`, () => mtimeMs(join(dirOf(id), "got_term")), 60_000);
    out.push(got - t0);
  }
  return out;
}

function latencyRow(what: string, xs: number[], unit = "ms"): void {
  rows.push({
    what,
    value: `median ${median(xs).toFixed(0)} ${unit}, worst ${xs.reduce((w, x) => (Math.abs(x) > Math.abs(w) ? x : w), 0).toFixed(0)} ${unit}`,
    floor: "",
    ratio: "",
  });
}

const mtimeMs = (p: string): number | undefined => {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
};

const readLocal = (p: string): string | null => {
  try {
    return readFileSync(p, "utf8") || null;
  } catch {
    return null;
  }
};

if (process.argv.includes("--by-age")) {
  const i = process.argv.indexOf("--minutes");
  const minutes = i >= 0 ? Number(process.argv[i + 1]) : 4;
  if (!(minutes >= 1))
    throw new Error(`--minutes ${process.argv[i + 1]}: give a number of minutes, 1 or more`);
  console.error(`local: ${N_LOCAL} quiet jobs, read at each minute of their age up to ${minutes}`);
  try {
    const byAge = await cpuByAge({
      n: N_LOCAL,
      minutes,
      jobsDir,
      submit,
      cancel: (id) => cli(["cancel", id]),
    });
    console.log("| measurement | jobs |\n|---|---|");
    for (const r of byAge) console.log(`| ${r.what} | ${r.value} |`);
    console.log(
      `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · ${BIN === join(ROOT, "dist", "awaitless") ? "this build" : BIN} · N=${N_LOCAL}`,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  process.exit(0);
}

try {
  // --- local -----------------------------------------------------------------------------------------------
  console.error(`local: ${N_LOCAL} quiet jobs, ${K} cancel probes, ${K} timeout probes`);
  const idle = await Promise.all(Array.from({ length: N_LOCAL }, () => submit(["sleep", "3600"])));
  cleanup.push(async () => {
    for (const id of idle) await cli(["cancel", id]);
  });
  const cancelIds = await Promise.all(Array.from({ length: K }, () => submit(TERM_PROBE)));
  const timeoutIds = await Promise.all(
    Array.from({ length: K }, () => submit(TERM_PROBE, ["--timeout", `${TIMEOUT_S}s`])),
  );
  cleanup.push(async () => {
    for (const id of cancelIds) await cli(["cancel", id]);
  });
  for (const id of [...idle, ...cancelIds, ...timeoutIds]) {
    await until(`${id} started`, () => (readLocal(join(jobsDir, id, "started")) ? true : undefined));
  }
  const floor = await startFloor(N_LOCAL);
  cleanup.push(() => killAll(floor));

  // The MCP server watching all of them, and a CLI waiting on one.
  const mcp = await connectStdio("modern", env, home, "awaitless-bench-idle");
  cleanup.push(() => mcp.close());
  await mcp.client.callTool({
    name: "wait_for_completions",
    arguments: { job_ids: idle.slice(0, 100), timeout_seconds: 1 },
  });
  const waiter = Bun.spawn([BIN, "wait", idle[0]!], { env, stdout: "ignore", stderr: "ignore" });
  cleanup.push(() => waiter.kill("SIGKILL"));

  await sleepMs(SETTLE_S * 1000);
  const groups: Group[] = [
    {
      name: "local jobs",
      sessions: new Set(idle.flatMap((id) => jobSessions(join(jobsDir, id)))),
      pids: new Set(),
    },
    { name: "local floor", sessions: new Set(), pids: new Set(floor) },
    { name: "mcp", sessions: new Set(), pids: new Set([mcp.pid!]) },
    { name: "wait", sessions: new Set(), pids: new Set([waiter.pid]) },
  ];
  const b = snapshot(groups);
  const t0 = wallMs();
  await sleepMs(WINDOW_S * 1000);
  const a = snapshot(groups);
  const secs = (wallMs() - t0) / 1000;
  cpuRows("local", N_LOCAL, b, a, secs);
  const coreShare = (g: string) => ((a.get(g)!.ticks - b.get(g)!.ticks) / HZ / secs) * 100;
  rows.push({
    what: `MCP server watching ${Math.min(100, N_LOCAL)} active jobs: share of a core`,
    value: `${coreShare("mcp").toFixed(2)} %`,
    floor: "",
    ratio: "",
  });
  rows.push({
    what: `CLI \`wait\` on one of ${N_LOCAL} active jobs: share of a core`,
    value: `${coreShare("wait").toFixed(2)} %`,
    floor: "",
    ratio: "",
  });
  await mcp.close();
  waiter.kill("SIGKILL");
  killAll(floor);

  latencyRow(
    `local: cancel → TERM reaches the command, after ${SETTLE_S + WINDOW_S} s quiet (CLI start included)`,
    await cancelLatencies(cancelIds, (id) => join(jobsDir, id)),
  );
  const errs: number[] = [];
  for (const id of timeoutIds) {
    const dir = join(jobsDir, id);
    const got = await until(`${id} timed out`, () => mtimeMs(join(dir, "got_term")));
    errs.push(got - (statSync(join(dir, "started")).mtimeMs + TIMEOUT_S * 1000));
  }
  latencyRow(`local: timeout ${TIMEOUT_S} s, TERM minus (start + timeout)`, errs);
  for (const id of idle) await cli(["cancel", id]);
  cleanup.length = 0;

  // --- SSH -------------------------------------------------------------------------------------------------
  const sshOk = noSsh ? { ok: false, why: "--no-ssh" } : sshdAvailable();
  if (!sshOk.ok) console.error(`ssh: skipped (${sshOk.why})`);
  else {
    console.error(`ssh: ${N_SSH} quiet jobs on a private sshd`);
    const { sshd, sshDir } = await startBenchSshd(home);
    cleanup.push(() => sshd.stop());
    const remote: string[] = [];
    for (let i = 0; i < N_SSH; i += 10) {
      const batch = Math.min(10, N_SSH - i);
      remote.push(
        ...(await Promise.all(
          Array.from({ length: batch }, () => submit(["sleep", "3600"], ["--host", "bench"])),
        )),
      );
    }
    const rCancel: string[] = [];
    for (let i = 0; i < K; i++) rCancel.push(await submit(TERM_PROBE, ["--host", "bench"]));
    cleanup.push(async () => {
      for (const id of [...remote, ...rCancel]) await cli(["cancel", id]);
    });
    // The remote job directories: found through the wrappers' working directories (the sshd runs on this machine).
    const remoteDir = new Map<string, string>();
    await until(`${N_SSH + K} remote wrappers started`, () => {
      for (const name of readdirSync("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        try {
          const cwd = readFileSync(`/proc/${name}/cmdline`, "utf8");
          if (!cwd.includes("wrapper")) continue;
          const dir = readlinkSync(`/proc/${name}/cwd`);
          const id = dir.split("/").pop()!;
          if ((remote.includes(id) || rCancel.includes(id)) && readLocal(join(dir, "started")))
            remoteDir.set(id, dir);
        } catch {}
      }
      return remoteDir.size === N_SSH + K ? true : undefined;
    });
    const rFloor = await startFloor(N_SSH, "awl-dash");
    cleanup.push(() => killAll(rFloor));
    await sleepMs(SETTLE_S * 1000);
    const rGroups: Group[] = [
      {
        name: "ssh jobs",
        sessions: new Set(remote.flatMap((id) => jobSessions(remoteDir.get(id)!))),
        pids: new Set(),
      },
      { name: "ssh floor", sessions: new Set(), pids: new Set(rFloor) },
    ];
    const rb = snapshot(rGroups);
    const rt0 = wallMs();
    await sleepMs(WINDOW_S * 1000);
    const ra = snapshot(rGroups);
    cpuRows("ssh", N_SSH, rb, ra, (wallMs() - rt0) / 1000);
    killAll(rFloor);
    latencyRow(
      `ssh: cancel → TERM reaches the command, after ${SETTLE_S + WINDOW_S} s quiet (CLI start included)`,
      await cancelLatencies(rCancel, (id) => remoteDir.get(id)!),
    );
    // For scale: one plain OpenSSH login and command, what any request to the host costs at least.
    const logins: number[] = [];
    for (let i = 0; i < K; i++) {
      const t0 = wallMs();
      const p = Bun.spawn(
        [
          "ssh",
          "-F",
          join(sshDir, "config"),
          "-o",
          "BatchMode=yes",
          "-o",
          "ControlPath=none",
          "bench",
          "true",
        ],
        { stdout: "ignore", stderr: "ignore" },
      );
      await p.exited;
      logins.push(wallMs() - t0);
    }
    latencyRow("ssh: for scale, a plain `ssh HOST true` (new connection)", logins);
  }
} finally {
  for (const f of cleanup.reverse()) {
    try {
      await f();
    } catch (e) {
      console.error(`cleanup: ${(e as Error).message}`);
    }
  }
  rmSync(home, { recursive: true, force: true });
}

const header = ["measurement", "jobs", "floor (nohup sleep)", "ratio"];
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const r of rows) console.log(`| ${r.what} | ${r.value} | ${r.floor} | ${r.ratio} |`);
console.log(
  `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · ${BIN === join(ROOT, "dist", "awaitless") ? "this build" : BIN} · window ${WINDOW_S} s${quick ? " (quick)" : ""}`,
);
