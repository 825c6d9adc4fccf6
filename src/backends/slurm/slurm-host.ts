// Owns one Slurm cluster as this process sees it: its settings from [hosts.NAME], its runner, its shared poller,
// and the prepared job root (slurm_job_dir, refused when another user could control it) with the wrapper installed.
import { isAbsolute, resolve } from "node:path";
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { keyValues, PREPARE } from "../../wrapper/host-scripts.ts";
import { WRAPPER_TEXT } from "../../wrapper/scripts.ts";
import { onceUntilFailure } from "../host/job-host.ts";
import { WRAPPER_FILE } from "../ssh/ssh-host.ts";
import { SshWatch } from "../ssh/ssh-watch.ts";
import type { CommandRunner } from "./runner.ts";
import { localExitWatch, SlurmEvents, sleepFor, sshExitWatch } from "./slurm-events.ts";
import { type PollerOptions, SlurmPoller } from "./slurm-poller.ts";
import { parseMaxArraySize, SCONTROL_CONFIG_ARGS } from "./slurm-queries.ts";

export const DEFAULT_ACCOUNTING_GRACE_SECONDS = 120;
export const DEFAULT_SLURM_CALL_TIMEOUT_MS = 30_000;
/** Slurm's own default MaxArraySize, assumed when `scontrol show config` does not say. */
export const DEFAULT_MAX_ARRAY_SIZE = 1001;
/** Relative to the login user's home; it must be on a file system the compute nodes see. */
export const DEFAULT_SLURM_JOB_DIR = ".awaitless/slurm";

export interface SlurmHostSettings {
  name: string;
  /** slurm_job_dir as configured (absolute, or relative to the login user's home). */
  jobDir: string;
  accountingGraceMs: number;
  /** [hosts.NAME.slurm]: default resources, validated at launch. */
  defaults: Record<string, string | number>;
  callTimeoutMs: number;
  /** slurm_watch: the login side watches job directories for exit records (the event path). */
  watch: boolean;
}

export interface PreparedRoot {
  home: string;
  root: string;
  wrapperPath: string;
}

export function slurmHostSettings(name: string, hosts: Record<string, HostConfig>): SlurmHostSettings {
  const h = hosts[name] ?? {};
  return {
    name,
    jobDir: h.slurm_job_dir ?? DEFAULT_SLURM_JOB_DIR,
    accountingGraceMs: (h.slurm_accounting_grace ?? DEFAULT_ACCOUNTING_GRACE_SECONDS) * 1000,
    defaults: h.slurm ?? {},
    callTimeoutMs:
      h.operation_timeout !== undefined ? h.operation_timeout * 1000 : DEFAULT_SLURM_CALL_TIMEOUT_MS,
    watch: h.slurm_watch ?? true,
  };
}

/**
 * True when the cluster's login node is this machine: `transport = "local"` in [hosts.NAME] says so explicitly;
 * without a transport, the host `localhost` (or `local`) with no SSH settings of its own counts too (fallback).
 * Every other host is reached over SSH.
 */
export function isLocalLoginNode(name: string, hosts: Record<string, HostConfig>): boolean {
  const h = hosts[name];
  if (h?.transport !== undefined) return h.transport === "local";
  if (name !== "localhost" && name !== "local") return false;
  return h === undefined || (h.hostname === undefined && h.port === undefined && h.user === undefined);
}

export class SlurmHost {
  readonly poller: SlurmPoller;
  /** The event path: the exit record seen from the login side, then sacct for that job (off: polling only). */
  readonly events: SlurmEvents;
  private readonly watch: SshWatch | undefined;

  constructor(
    readonly settings: SlurmHostSettings,
    readonly runner: CommandRunner,
    poller: PollerOptions,
  ) {
    this.poller = new SlurmPoller(runner, { callTimeoutMs: settings.callTimeoutMs, ...poller });
    this.watch = runner.sshHost ? new SshWatch(runner.sshHost) : undefined;
    const watchExit = runner.isLocal ? localExitWatch : this.watch ? sshExitWatch(this.watch) : undefined;
    const off = !settings.watch
      ? `slurm_watch = false in [hosts.${settings.name}]`
      : watchExit === undefined
        ? "no watch for this login node's runner"
        : null;
    this.events = new SlurmEvents(runner, watchExit ?? ((_d, ms, s) => sleepFor(ms, s)), {
      off,
      callTimeoutMs: settings.callTimeoutMs,
      maxGapMs: this.poller.currentIntervalMs,
    });
  }

  get name(): string {
    return this.settings.name;
  }

  /**
   * Refuses a slurm_job_dir another user could control, creates <slurm_job_dir>/{jobs,bin} (0700) and installs the
   * wrapper there, checking it once per process (a changed one is replaced).
   */
  readonly prepare: () => Promise<PreparedRoot> = onceUntilFailure(() => this.doPrepare());

  /** The cluster's MaxArraySize (task IDs run from 0 to it minus one), read once per process from `scontrol show config`. */
  readonly maxArraySize: () => Promise<number> = onceUntilFailure(async () => {
    const r = await this.runner.exec(SCONTROL_CONFIG_ARGS, { timeoutMs: this.settings.callTimeoutMs });
    return (r.code === 0 ? parseMaxArraySize(r.stdout) : undefined) ?? DEFAULT_MAX_ARRAY_SIZE;
  });

  private async doPrepare(): Promise<PreparedRoot> {
    const home = await this.runner.homeDir();
    const dir = this.settings.jobDir.replace(/^~(\/|$)/, "");
    const given = isAbsolute(dir) ? dir : `${home.replace(/\/+$/, "")}/${dir}`;
    const fail = (why: string) =>
      new AwaitlessError(
        "launch_failed",
        `could not prepare the Slurm job directory ${given} on ${this.name}: ${why}`,
        `set slurm_job_dir in [hosts.${this.name}] to a writable directory that the compute nodes also see`,
        { host: this.name },
      );
    // The same checks as an SSH host's remote_job_dir: it, jobs/, bin/ and every ancestor only ours (or root's).
    const r = await this.runner.exec(["sh", "-c", PREPARE, "sh", given, WRAPPER_FILE], {
      timeoutMs: this.settings.callTimeoutMs,
    });
    const kv = keyValues(r.stdout);
    if (kv.untrusted === "1") {
      throw new AwaitlessError(
        "launch_failed",
        `refusing slurm_job_dir ${given} on ${this.name}: ${kv.error ?? "it is not a directory only you control"}`,
        `${kv.fix ?? "choose a directory you own"} (slurm_job_dir in [hosts.${this.name}])`,
        { host: this.name },
      );
    }
    if (r.code !== 0 || !kv.root) throw fail(kv.error ?? (r.stderr.trim() || `exit ${r.code}`));
    const root = kv.root;
    const wrapperPath = `${root}/bin/${WRAPPER_FILE}`;
    try {
      // Checked against the wrapper's text (so its SHA-256) whenever the root is prepared; a changed one is replaced.
      const have = await this.runner.readFile(wrapperPath, Buffer.byteLength(WRAPPER_TEXT) + 1);
      if (have !== WRAPPER_TEXT) await this.runner.writeFile(wrapperPath, WRAPPER_TEXT, 0o600);
    } catch (e) {
      if (e instanceof AwaitlessError && e.code === "connection_failed") throw e;
      throw fail((e as Error).message);
    }
    return { home, root, wrapperPath };
  }

  /** The job's working directory on the cluster: relative paths start at the caller's cwd (local) or the home directory. */
  resolveCwd(cwd: string, home: string): string {
    if (isAbsolute(cwd)) return cwd;
    if (this.runner.isLocal) return resolve(process.cwd(), cwd);
    const rel = cwd.replace(/^~(\/|$)/, "");
    return rel === "" || rel === "." ? home : `${home.replace(/\/+$/, "")}/${rel}`;
  }

  close(): void {
    this.poller.close();
    this.watch?.close();
    this.runner.close();
  }
}
