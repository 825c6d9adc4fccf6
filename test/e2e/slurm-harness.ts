// Test harness for the Slurm backend against the real test cluster (test/infra/slurm-up.sh): availability gate,
// a JobService over a temp store, a runner (local, or any CommandRunner) that counts and can cut scheduler calls.
import { test } from "bun:test";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { capabilitiesOf } from "../../src/backends/capabilities.ts";
import type { JobFiles } from "../../src/backends/host/job-host.ts";
import {
  type CommandRunner,
  type ExecOptions,
  LocalRunner,
  type RunResult,
} from "../../src/backends/slurm/runner.ts";
import { SlurmBackend } from "../../src/backends/slurm/slurm-backend.ts";
import type { HostConfig } from "../../src/config/config.ts";
import { AwaitlessError, useHintTable } from "../../src/core/model/errors.ts";
import { JobService } from "../../src/core/service/job-service.ts";
import { JobStore } from "../../src/core/store/job-store.ts";
import { HINTS } from "../../src/hints.ts";

export { until } from "../helpers/until.ts";

export const HOW_TO = "start it with `bash test/infra/slurm-up.sh` as root (docs/slurm.md), then rerun";

export async function run(argv: string[]): Promise<RunResult> {
  return new LocalRunner().exec(argv, { timeoutMs: 30_000 });
}

async function probe(): Promise<string | undefined> {
  const ping = await run(["scontrol", "ping"]).catch(() => undefined);
  if (ping === undefined) return "the Slurm client tools are not installed";
  if (ping.code !== 0 || !/UP/.test(ping.stdout)) return "slurmctld does not answer `scontrol ping`";
  if (process.getuid?.() !== 0) return "the local-runner tests submit as root; run them as root";
  return undefined;
}

/** Returns whether Slurm is up; otherwise skips with a how-to, or fails under AWAITLESS_REQUIRE_ALL=1. */
export async function slurmUp(what: string): Promise<boolean> {
  const why = await probe();
  if (why === undefined) return true;
  if (process.env.AWAITLESS_REQUIRE_ALL === "1") {
    test(`${what} can run (AWAITLESS_REQUIRE_ALL=1)`, () => {
      throw new Error(`${what} cannot run: ${why}; ${HOW_TO}.`);
    });
  } else console.warn(`[skip] ${what}: ${why}; ${HOW_TO}.`);
  return false;
}

/**
 * Wraps a runner (default: this machine) to record every call, and can cut the "connection" right after a chosen
 * program ran. The same wrapper serves the local rigs and the SSH ones (an SshRunner inside).
 */
export class CountingRunner implements CommandRunner {
  readonly calls: { program: string; argv: string[]; atMs: number }[] = [];
  /** When set, the next call of this program runs, then its reply is thrown away (a dropped connection). */
  cutAfter: string | null = null;
  /** Programs whose calls fail as if the connection were down (they never run). */
  readonly blocked = new Set<string>();

  constructor(readonly inner: CommandRunner = new LocalRunner()) {}

  get label(): string {
    return this.inner.label;
  }
  get isLocal(): boolean {
    return this.inner.isLocal;
  }
  get sshHost() {
    return this.inner.sshHost;
  }

  async exec(argv: readonly string[], opts: ExecOptions): Promise<RunResult> {
    const program = argv[0] ?? "";
    if (this.blocked.has(program)) {
      throw new AwaitlessError("connection_failed", `the connection to ${this.label} is down`, "retry");
    }
    this.calls.push({ program, argv: [...argv], atMs: Date.now() });
    const r = await this.inner.exec(argv, opts);
    if (this.cutAfter === program) {
      this.cutAfter = null;
      throw new AwaitlessError(
        "connection_failed",
        `the connection to ${this.label} was lost during ${program}`,
        "retry",
      );
    }
    return r;
  }

  count(program: string, sinceMs = 0): number {
    return this.calls.filter((c) => c.program === program && c.atMs >= sinceMs).length;
  }

  homeDir(): Promise<string> {
    return this.inner.homeDir();
  }
  mkdirp(path: string, mode: number): Promise<void> {
    return this.inner.mkdirp(path, mode);
  }
  writeFile(path: string, data: string, mode: number): Promise<void> {
    return this.inner.writeFile(path, data, mode);
  }
  readFile(path: string, maxBytes: number): Promise<string | null> {
    return this.inner.readFile(path, maxBytes);
  }
  /** The login side's files are not scheduler calls: read through the inner runner's JobHost, not counted. */
  get files(): JobFiles {
    return this.inner.files;
  }
  close(): void {
    this.inner.close();
  }
}

export interface Rig {
  service: JobService;
  /** The service's store (private to the service), for what a test checks or stages in it directly. */
  store: JobStore;
  backend: SlurmBackend;
  runner: CountingRunner;
  root: string;
  close(): void;
}

export interface RigOptions {
  pollIntervalMs?: number;
  /** The scheduler floor; default pollIntervalMs. */
  minPollIntervalMs?: number;
  host?: Partial<HostConfig>;
  /** Reuse another rig's directories and store (a second process on the same data); it removes them. */
  root?: string;
  adoptWindowMs?: number;
  exitSettleMs?: number;
  /** The login node's runner (wrapped in a CountingRunner); default this machine as "localhost". */
  inner?: CommandRunner;
  /** The host name jobs are submitted to; default "localhost". */
  hostName?: string;
}

// The rig builds its service without context.ts, so it installs the hint wording itself.
useHintTable(HINTS);

export function makeRig(opts: RigOptions = {}): Rig {
  const root = opts.root ?? realpathSync(mkdtempSync(join(tmpdir(), "awl-slurm-backend-")));
  const runner = new CountingRunner(opts.inner);
  const pollIntervalMs = opts.pollIntervalMs ?? 500;
  const hostName = opts.hostName ?? "localhost";
  // a remote login user cannot write into our temp dir: its job dir stays the default under its home
  const jobDir = runner.isLocal ? { slurm_job_dir: join(root, "cluster") } : {};
  const hosts: Record<string, HostConfig> = {
    [hostName]: { ...jobDir, slurm_accounting_grace: 30, ...opts.host },
  };
  const store = JobStore.open(join(root, "data"));
  const backend = new SlurmBackend({
    hosts,
    pollIntervalMs,
    minPollIntervalMs: opts.minPollIntervalMs ?? pollIntervalMs,
    // rigs on one root share scheduler rounds, as processes on one store do
    rounds: store.rounds,
    launchGraceSeconds: 30,
    runnerFor: () => runner,
    persistBackendId: (jobId, backendId) => store.setBackendId(jobId, backendId),
    ...(opts.adoptWindowMs !== undefined ? { adoptWindowMs: opts.adoptWindowMs } : {}),
    ...(opts.exitSettleMs !== undefined ? { exitSettleMs: opts.exitSettleMs } : {}),
  });
  const service = new JobService(
    store,
    { slurm: backend },
    {
      maxReturnBytes: 16_384,
      pollIntervalMs,
      graceSeconds: 2,
      logCapBytes: 1024 * 1024,
      launchGraceSeconds: 30,
      defaultBackend: "slurm",
      defaultHost: hostName,
      defaultQueue: null,
      capabilitiesOf,
      startWaitMs: 2000,
      callerEnv: process.env,
      callerCwd: root,
    },
  );
  return {
    service,
    store,
    backend,
    runner,
    root,
    close() {
      backend.close();
      if (opts.root === undefined) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** What slurmJobIdOf reads: a job's status from the CLI, MCP or the service (backend_id.slurm_job_id). */
export interface StatusWithSlurmId {
  state?: unknown;
  status_message?: unknown;
  backend_id?: { slurm_job_id?: unknown } | null;
}

/**
 * The Slurm job ID a job's status records, waited for (polling `status` up to `timeoutMs`). Submit can return
 * without it: when sbatch's reply was lost or ambiguous (a loaded slurmctld) and no job with the attempt's tag showed
 * up within the adopt window, the submission is unconfirmed until a later look (any status) adopts the job by its tag.
 */
export async function slurmJobIdOf(
  status: () => StatusWithSlurmId | Promise<StatusWithSlurmId>,
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const st = await status();
    const sid = st.backend_id?.slurm_job_id;
    if (typeof sid === "string" && sid !== "") return sid;
    if (Date.now() > deadline) {
      const seen = JSON.stringify({
        state: st.state,
        status_message: st.status_message,
        backend_id: st.backend_id,
      });
      throw new Error(`no Slurm job ID recorded within ${timeoutMs} ms (last status: ${seen})`);
    }
    await Bun.sleep(500);
  }
}

/** slurmJobIdOf for a rig's job: the stored ID when there is one, else what the service's status adopts. */
export function rigSlurmJobIdOf(rig: Rig, jobId: string, timeoutMs = 60_000): Promise<string> {
  return slurmJobIdOf(async () => {
    const stored = rig.service.getJob(jobId) as StatusWithSlurmId;
    return stored.backend_id?.slurm_job_id !== undefined ? stored : await rig.service.status(jobId);
  }, timeoutMs);
}

/** sacct's allocation lines for a job ID: State and ExitCode. */
export async function sacctState(slurmJobId: string): Promise<string> {
  const r = await run(["sacct", "-X", "-n", "-P", "-o", "State,ExitCode", "-j", slurmJobId]);
  return r.stdout.trim();
}

/** Why this cluster cannot enforce --mem (so no job can end OUT_OF_MEMORY), or undefined when it can. */
export async function memoryNotEnforced(): Promise<string | undefined> {
  const r = await run(["scontrol", "show", "config"]);
  if (r.code !== 0) return `scontrol show config failed: ${r.stderr.trim()}`;
  const value = (key: string) => new RegExp(`^${key}\\s*=\\s*(.*)$`, "m").exec(r.stdout)?.[1]?.trim() ?? "";
  const plugin = value("TaskPlugin");
  if (!plugin.includes("task/cgroup"))
    return `TaskPlugin = ${plugin || "(unset)"}: without task/cgroup Slurm does not confine memory (slurm-up.sh falls back to it when no cgroup memory controller is writable; AWAITLESS_SLURM_CGROUP)`;
  if (value("ConstrainRAMSpace") !== "yes")
    return `ConstrainRAMSpace = ${value("ConstrainRAMSpace") || "(unset)"} in cgroup.conf: --mem is not enforced`;
  return undefined;
}
