// Benchmarks of the SSH backend against plain OpenSSH run as the baseline in the same script, on a private sshd
// (test/helpers/sshd.ts; needs root): submit latency, status of 50 active jobs, remote exit → wait returns.
// Prints medians and ratios (absolute times on a shared machine are noise; ratios are what to quote).
// Usage: bun run build && bun bench/ssh.ts            bun bench/ssh.ts --quick   (fewer repetitions)
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContext } from "../src/context.ts";
import { startBenchSshd } from "./sshd.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = join(ROOT, "dist", "awaitless");
const quick = process.argv.includes("--quick");
const N = quick ? 8 : 25;

const home = mkdtempSync(join(tmpdir(), "awl-bench-ssh-"));
const { sshd, configPath: cfg } = await startBenchSshd(home, {
  bench: [],
  "bench-ossh": [`ControlPath ${join(home, "cm-%C")}`],
});
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  AWAITLESS_DATA_DIR: join(home, "data"),
  AWAITLESS_CONFIG: join(home, "config.toml"),
  NO_COLOR: "1",
};
writeFileSync(env.AWAITLESS_CONFIG!, '[hosts.bench-ossh]\ntransport = "openssh"\n');
// The in-process service reads the same files (the ssh config through $HOME).
Object.assign(process.env, env);
const { service } = createContext(process.env);

/** A plain OpenSSH call: a new `ssh` process, a new connection and login (no ControlMaster). */
const SSH = ["ssh", "-F", cfg, "-o", "BatchMode=yes", "-o", "ControlPath=none", "bench"];

const ms = (t0: number) => performance.now() - t0;
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
// Always spawn asynchronously: the event loop must keep draining sshd's log pipe (a full pipe stalls sshd).
async function exec(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn(argv, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}
async function timeSpawn(argv: string[]): Promise<number> {
  const t0 = performance.now();
  const r = await exec(argv);
  const t = ms(t0);
  if (r.code !== 0) throw new Error(`${argv.join(" ")} failed: ${r.stderr}`);
  return t;
}
async function repeat(n: number, f: () => number | Promise<number>): Promise<number> {
  await f(); // warm caches and connections
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await f());
  return median(xs);
}
async function cli(args: string[]) {
  const r = await exec([BIN, ...args]);
  if (r.code !== 0) throw new Error(`awaitless ${args.join(" ")} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

interface Row {
  what: string;
  median: number;
  baseline: string;
  baselineMedian: number;
  target?: string;
}
const rows: Row[] = [];
let seq = 0;
/** A command that is new each time (identical active commands are refused as duplicates). */
const fresh = (script: string) => ["sh", "-c", script, "sh", String(++seq)];
const active: { id: string; dir: string }[] = [];

try {
  // 1. Submit latency.
  const nohup = await repeat(N, () =>
    timeSpawn([...SSH, 'cd && nohup sh -c true >/dev/null 2>&1 </dev/null & echo "$!"']),
  );
  const sshNohup = "`ssh HOST 'nohup CMD &'` (new ssh process)";
  rows.push({
    what: "submit on a warm ssh2 connection (in-process, as the MCP server)",
    median: await repeat(N, async () => {
      const t0 = performance.now();
      await service.submit({ argv: fresh("true"), backend: "ssh", host: "bench" });
      return ms(t0);
    }),
    baseline: sshNohup,
    baselineMedian: nohup,
  });
  rows.push({
    what: "`awaitless submit --host` (new process, new ssh2 connection)",
    median: await repeat(N, () =>
      timeSpawn([BIN, "submit", "--backend", "ssh", "--host", "bench", "--", ...fresh("true")]),
    ),
    baseline: sshNohup,
    baselineMedian: nohup,
  });
  rows.push({
    what: "`awaitless submit --host`, transport = openssh (warm ControlMaster)",
    median: await repeat(N, () =>
      timeSpawn([BIN, "submit", "--backend", "ssh", "--host", "bench-ossh", "--", ...fresh("true")]),
    ),
    baseline: sshNohup,
    baselineMedian: nohup,
  });

  // 2. Status of 50 active jobs on one host.
  for (let i = 0; i < 50; i++) {
    const r = await service.submit({ argv: fresh("sleep 600"), backend: "ssh", host: "bench" });
    active.push({ id: r.job_id, dir: String((await service.status(r.job_id)).backend_id?.remote_dir) });
  }
  const readOne = (dir: string) => `cat ${dir}/heartbeat; test -f ${dir}/exit && cat ${dir}/exit; true`;
  const fifty = await repeat(quick ? 2 : 5, async () => {
    const t0 = performance.now();
    for (const a of active) await timeSpawn([...SSH, readOne(a.dir)]);
    return ms(t0);
  });
  rows.push({
    what: "status of 50 active jobs, warm connection (in-process list)",
    median: await repeat(N, async () => {
      await Bun.sleep(400); // past the 300 ms snapshot: every list makes its one round trip
      const t0 = performance.now();
      const l = await service.list({ state: "active", limit: 100 });
      if (l.length < 50) throw new Error(`list saw ${l.length} active jobs`);
      return ms(t0);
    }),
    baseline: "50 × `ssh HOST cat …` (sequential)",
    baselineMedian: fifty,
  });
  rows.push({
    what: "status of 50 active jobs: `awaitless list` (new process, new connection)",
    median: await repeat(N, () => timeSpawn([BIN, "list", "--json", "--state", "active", "--limit", "100"])),
    baseline: "50 × `ssh HOST cat …` (sequential)",
    baselineMedian: fifty,
  });
  for (const a of active) await service.cancel(a.id, 0).catch(() => undefined);

  // 3. From the remote command's exit to the result being seen.
  /** A job that exits 2 s from now, and its directory on the host. */
  async function submitShort(): Promise<{ id: string; dir: string }> {
    const argv = ["submit", "--json", "--backend", "ssh", "--host", "bench", "--", ...fresh("sleep 2")];
    const id = (await cli(argv)).job_id as string;
    return { id, dir: (await cli(["status", "--json", id])).backend_id.remote_dir as string };
  }
  async function exitToWait(): Promise<number> {
    const { id, dir } = await submitShort();
    const p = Bun.spawn([BIN, "wait", id], { env, stdout: "ignore", stderr: "ignore" });
    await p.exited;
    // The exit record is written right after the command exits; the "host" is this machine, so its mtime is the time.
    return Date.now() - statSync(join(dir, "exit")).mtimeMs;
  }
  async function exitToPoll(intervalMs: number): Promise<number> {
    const { dir } = await submitShort();
    await Bun.sleep(Math.random() * intervalMs); // a poller started at an arbitrary phase
    for (;;) {
      const r = await exec([...SSH, `test -f ${dir}/exit`]);
      if (r.code === 0) return Date.now() - statSync(join(dir, "exit")).mtimeMs;
      if (intervalMs > 0) await Bun.sleep(intervalMs);
    }
  }
  const waits: number[] = [];
  const polls2s: number[] = [];
  const pollsTight: number[] = [];
  for (let i = 0; i < (quick ? 4 : 10); i++) {
    waits.push(await exitToWait());
    polls2s.push(await exitToPoll(2000));
    pollsTight.push(await exitToPoll(0));
  }
  rows.push({
    what: "remote exit → `awaitless wait` returns (watch channel)",
    median: median(waits),
    baseline: "`ssh HOST test -f exit` every 2 s",
    baselineMedian: median(polls2s),
    target: "≤ 1500 ms",
  });
  rows.push({
    what: "remote exit → `awaitless wait` returns (watch channel)",
    median: median(waits),
    baseline: "`ssh HOST test -f exit` back to back (a login per check)",
    baselineMedian: median(pollsTight),
    target: "≤ 1500 ms",
  });
} finally {
  // Cleanup: the OpenSSH master, the job processes left on the host (by PID), sshd, the temp dir.
  const check = Bun.spawnSync(["ssh", "-F", cfg, "-O", "check", "bench-ossh"], { stdin: "ignore" });
  const master = /pid=(\d+)/.exec(check.stderr.toString())?.[1];
  if (master) Bun.spawnSync(["ssh", "-F", cfg, "-O", "exit", "bench-ossh"], { stdin: "ignore" });
  for (const a of active) {
    try {
      const s = readFileSync(join(a.dir, "started"), "utf8");
      const pgid = Number(/^pgid=(\d+)$/m.exec(s)?.[1]);
      const wrapper = Number(/^wrapper_pid=(\d+)$/m.exec(s)?.[1]);
      if (wrapper > 1) process.kill(wrapper, "SIGKILL");
      if (pgid > 1) process.kill(-pgid, "SIGKILL");
    } catch {
      // finished and gone
    }
  }
  await sshd.stop();
  rmSync(home, { recursive: true, force: true });
}

const header = ["measurement", "median", "baseline", "baseline median", "ratio", "target"];
console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
for (const r of rows) {
  const cells = [
    r.what,
    `${r.median.toFixed(1)} ms`,
    r.baseline,
    `${r.baselineMedian.toFixed(1)} ms`,
    `${(r.median / r.baselineMedian).toFixed(2)}×`,
    r.target ?? "",
  ];
  console.log(`| ${cells.join(" | ")} |`);
}
console.log(
  `\n${new Date().toISOString()} · ${navigator.hardwareConcurrency} CPUs · Bun ${Bun.version} · OpenSSH ${Bun.spawnSync(["ssh", "-V"]).stderr.toString().trim().split(",")[0]} · n=${N}${quick ? " (quick)" : ""}`,
);
process.exit(0);
