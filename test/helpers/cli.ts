// Runs the compiled binary as a user would, against a private data dir; helpers to wait on conditions.
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropJobCgroups } from "../../src/backends/local/job-cgroups.ts";
import { statField } from "./proc-state.ts";

export { until } from "./until.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const BINARY = join(ROOT, "dist", "awaitless");

export function requireBinary(): void {
  if (!existsSync(BINARY)) {
    throw new Error(`${BINARY} is missing: run \`bun run build\` first (npm test does it for you)`);
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of whatever the command printed
  json: any;
}

export class Sandbox {
  readonly root: string;
  readonly dataDir: string;
  readonly work: string;
  readonly env: Record<string, string>;

  constructor(extraEnv: Record<string, string> = {}) {
    requireBinary();
    this.root = realpathSync(mkdtempSync(join(tmpdir(), "awl-test-")));
    this.dataDir = join(this.root, "data");
    this.work = join(this.root, "work");
    Bun.spawnSync(["mkdir", "-p", this.work]);
    this.env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: this.root,
      AWAITLESS_DATA_DIR: this.dataDir,
      AWAITLESS_CONFIG: join(this.root, "config.toml"),
      NO_COLOR: "1",
      ...extraEnv,
    };
    Bun.write(this.env.AWAITLESS_CONFIG!, "");
  }

  writeConfig(toml: string): void {
    Bun.spawnSync(["sh", "-c", 'printf "%s" "$1" > "$2"', "sh", toml, this.env.AWAITLESS_CONFIG!]);
  }

  run(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
    const r = Bun.spawnSync([BINARY, ...args], {
      cwd: opts.cwd ?? this.work,
      env: { ...this.env, ...opts.env },
      stdout: "pipe",
      stderr: "pipe",
    });
    return finish(r.exitCode ?? -1, r.stdout.toString(), r.stderr.toString());
  }

  async runAsync(
    args: string[],
    opts: { cwd?: string; env?: Record<string, string> } = {},
  ): Promise<CliResult> {
    const p = Bun.spawn([BINARY, ...args], {
      cwd: opts.cwd ?? this.work,
      env: { ...this.env, ...opts.env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(p.stdout).text(),
      new Response(p.stderr).text(),
      p.exited,
    ]);
    return finish(code, stdout, stderr);
  }

  spawn(args: string[], opts: { env?: Record<string, string> } = {}) {
    return Bun.spawn([BINARY, ...args], {
      cwd: this.work,
      env: { ...this.env, ...opts.env },
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  submit(argv: string[], flags: string[] = []): string {
    const r = this.run(["submit", "--json", ...flags, "--", ...argv]);
    if (r.code !== 0) throw new Error(`submit failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json.job_id as string;
  }

  status(jobId: string) {
    const r = this.run(["status", "--json", jobId]);
    if (r.code !== 0) throw new Error(`status failed (${r.code}): ${r.stderr}${r.stdout}`);
    return r.json;
  }

  jobCount(): number {
    const r = this.run(["list", "--json", "--limit", "10000"]);
    return r.code === 0 ? r.json.jobs.length : 0;
  }

  cleanup(): void {
    const jobs = join(this.dataDir, "jobs");
    const dirs: string[] = [];
    if (existsSync(jobs)) {
      for (const id of readdirSync(jobs)) {
        dirs.push(join(jobs, id));
        const attempts = join(jobs, id, "attempts");
        if (existsSync(attempts)) for (const n of readdirSync(attempts)) dirs.push(join(attempts, n));
      }
    }
    // what a test that failed or ran out of time left running (its own `finally` never ran)
    stopUnfinishedJobs(dirs.filter((d) => !existsSync(join(d, "exit"))));
    // the cgroups of its jobs whose wrappers were killed (a finished wrapper removes its own)
    for (const dir of dirs) dropJobCgroups(dir);
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * KILL to every process of jobs that have no exit record: their wrappers and monitors (a command line ending in the
 * job directory) and their commands' processes (AWAITLESS_JOB_DIR=the job directory in their environment). A job
 * directory is the sandbox's own temporary path, so nothing of another test matches.
 */
function stopUnfinishedJobs(dirs: string[]): void {
  if (dirs.length === 0) return;
  const wanted = new Set(dirs);
  const marks = dirs.map((d) => `\0AWAITLESS_JOB_DIR=${d}\0`);
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
      const env = `\0${readFileSync(`/proc/${pid}/environ`, "utf8")}`;
      if (wanted.has(argv.at(-1) ?? "") || marks.some((m) => env.includes(m))) killQuietly(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

function finish(code: number, stdout: string, stderr: string): CliResult {
  let json: unknown = null;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = null;
  }
  return { code, stdout, stderr, json };
}

/**
 * A job's argv that runs `before`, waits until the file `gate` exists, then runs `after`: it ends when the test says
 * so (creates the gate), not after a stretch of time a busy machine may outlast.
 */
export function gatedCommand(gate: string, before = "", after = ""): string[] {
  const wait = 'while [ ! -e "$0" ]; do sleep 0.05; done';
  return ["sh", "-c", [before, wait, after].filter(Boolean).join("; "), gate];
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped) counts as dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export function killQuietly(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  if (!Number.isInteger(pid) || pid === 0 || pid === -1 || isOwnRun(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Is `pid` (a process, or with a minus a process group) this test run's own: this process, its runner, one of the
 * runner's other workers, or the group they share? A pid a test noted earlier can name one of them by the time it is
 * signalled: a small machine's pid_max is 32,768, and the suite starts processes fast enough to wrap it within
 * minutes (a parallel run once lost a worker to a SIGKILL from nowhere).
 */
export function isOwnRun(pid: number): boolean {
  const target = Math.abs(pid);
  if (target === process.pid || target === process.ppid) return true;
  if (pid < 0) return target === Number(statField("self", 5));
  // a sibling: started by the same parent (the runner's other workers); never init's orphans
  return process.ppid > 1 && Number(statField(target, 4)) === process.ppid;
}
