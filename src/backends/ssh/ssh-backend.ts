// The SSH backend: the same wrapper and on-disk protocol as locally, in <remote_job_dir>/jobs/<job_id> on the host.

// job.job_dir stays the LOCAL job dir (a 0600 copy of spec.sh, for redaction); backend_id.remote_dir names the
// remote one (before launch it is derived from the host's prepared root).
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { HostConfig } from "../../config/config.ts";
import type {
  Backend,
  LaunchInput,
  LeftoverStop,
  LogTail,
  Observation,
  QueueSnapshot,
  Stream,
} from "../../core/backend.ts";
import { parseCancelOutcome } from "../../core/backend.ts";
import { AwaitlessError } from "../../core/errors.ts";
import type { ArtifactEntry, BackendId, Job } from "../../core/job.ts";
import { HEARTBEAT_SECONDS } from "../../core/liveness.ts";
import type { LogQuery, LogScan } from "../../core/log-scan.ts";
import { isNoSpace, noSpaceError } from "../../core/store-errors.ts";
import { humanBytes } from "../../core/text.ts";
import { JOB_DIR_PRESENT, keyValues, launchScript, REMOVE } from "../../wrapper/host-scripts.ts";
import { CANCEL_TEXT, WRAPPER_SHA256 } from "../../wrapper/protocol.ts";
import { jobSpecText, localSpecMissing, writeLocalSpec } from "../job-spec.ts";
import { parseSpecSecrets } from "../local/spec-secrets.ts";
import { collectRemoteArtifacts } from "./ssh-artifacts.ts";
import { SshHost } from "./ssh-host.ts";
import { readRemoteTail, scanRemoteLog } from "./ssh-logs.ts";
import { toObservation, unreachableObservation } from "./ssh-observe.ts";
import { queueDirOf, queueDirOfJob, readRemoteQueueSnapshot } from "./ssh-queue.ts";
import { resolveHostSettings, type SshHostSettings } from "./ssh-target.ts";
import { SshWatch } from "./ssh-watch.ts";

export interface SshBackendOptions {
  hosts: Record<string, HostConfig>;
  tickSeconds?: number;
  heartbeatSeconds?: number;
  /** Lock mechanism when a host's queue directory is first used (tests force mkdir); default auto. */
  queueLock?: "auto" | "mkdir";
  /** Host settings resolver (tests); default: [hosts.NAME] over ~/.ssh/config. */
  resolve?: (name: string) => SshHostSettings;
}

export function isConnectionError(e: unknown): e is AwaitlessError {
  return e instanceof AwaitlessError && e.code === "connection_failed";
}

export class SshBackend implements Backend {
  readonly name = "ssh" as const;
  readonly supportsAdmission = true;
  private readonly hosts = new Map<string, { host: SshHost; watch: SshWatch }>();

  constructor(private readonly opts: SshBackendOptions) {}

  private hostFor(name: string | null): { host: SshHost; watch: SshWatch } {
    if (!name) {
      throw new AwaitlessError("invalid_argument", "an ssh job needs a host", {
        cli: "add --host NAME",
        mcp: "Add host: a [hosts.NAME] entry of the config or an ~/.ssh/config alias.",
      });
    }
    let h = this.hosts.get(name);
    if (!h) {
      const settings = this.opts.resolve
        ? this.opts.resolve(name)
        : resolveHostSettings(name, this.opts.hosts);
      const host = new SshHost(settings);
      h = { host, watch: new SshWatch(host) };
      this.hosts.set(name, h);
    }
    return h;
  }

  /** The connection-level view of a host (doctor). */
  host(name: string): SshHost {
    return this.hostFor(name).host;
  }

  private async remoteDir(job: Job): Promise<string> {
    const known = job.backend_id?.remote_dir;
    if (typeof known === "string") return known;
    const { root } = await this.hostFor(job.host).host.prepare();
    return `${root}/jobs/${job.job_id}`;
  }

  async launch(input: LaunchInput): Promise<BackendId> {
    const { job } = input;
    const { host } = this.hostFor(job.host);
    const prepared = await host.prepare();
    const dir = `${prepared.root}/jobs/${job.job_id}`;
    const text = jobSpecText(job, input, {
      tickSeconds: this.opts.tickSeconds ?? 1,
      heartbeatSeconds: this.opts.heartbeatSeconds ?? HEARTBEAT_SECONDS,
      admissionDir: queueDirOf(prepared.root),
      admissionLock: this.opts.queueLock ?? "auto",
    });
    writeLocalSpec(job.job_dir, text);
    const args = [dir, prepared.wrapperPath, WRAPPER_SHA256];
    let r = await host.run(launchScript(text), args);
    // The launch checks the wrapper's hash first: one that changed (or vanished) is uploaded again, once.
    if (r.code === 6 && keyValues(r.stdout.toString()).wrapper === "stale") {
      await host.uploadWrapper(prepared.wrapperPath);
      r = await host.run(launchScript(text), args);
    }
    // a status report taken before this launch (a retry's look at the job) must not answer for it afterwards
    host.invalidate();
    const kv = keyValues(r.stdout.toString());
    const pid = Number(kv.wrapper_pid);
    if (r.code !== 0 || !Number.isSafeInteger(pid) || pid <= 0) {
      const stderr = r.stderr.toString();
      if (kv.nospace === "1" || (kv.error && isNoSpace(stderr))) {
        // The script stopped before any wrapper started and removed what it had written.
        const kib = (k: string | undefined) => (k ? humanBytes(Number(k) * 1024) : "?");
        throw noSpaceError(`${prepared.root}/jobs`, `the job directory ${dir}`, kv.error ?? stderr.trim(), {
          host: host.name,
          free: `${kib(kv.avail_kib)} free of ${kib(kv.size_kib)}`,
        });
      }
      if (kv.wrapper === "stale" || kv.nohash === "1") {
        throw new AwaitlessError(
          "launch_failed",
          kv.nohash === "1"
            ? `could not check the job wrapper on ${host.name}: ${kv.error}`
            : `the job wrapper ${prepared.wrapperPath} on ${host.name} still does not match its SHA-256 after it was uploaded again`,
          kv.nohash === "1"
            ? "install sha256sum (coreutils or busybox) on the host"
            : "check that nothing else on the host rewrites files in remote_job_dir",
          { host: host.name, wrapper_stage: "launch" },
        );
      }
      throw new AwaitlessError(
        "launch_failed",
        `could not start the job wrapper on ${host.name}: ${kv.error ?? (stderr.trim().slice(0, 300) || `exit ${r.code}`)}`,
        `check that ${dir} can be created and that the host has sh and setsid or nohup-like job control`,
        {
          host: host.name,
          wrapper_stage: "launch",
          remote_stderr: stderr.slice(0, 2000),
          // another launch of this job created its directory first (a retry racing an abandoned launch)
          ...(kv.exists === "1" ? { job_dir_exists: true } : {}),
        },
      );
    }
    return {
      wrapper_pid: pid,
      remote_dir: dir,
      ...(kv.proc_start ? { proc_start: kv.proc_start } : {}),
      ...(kv.boot_id ? { boot_id: kv.boot_id } : {}),
      ...(kv.shell ? { remote_shell: kv.shell } : {}),
    };
  }

  /** No local spec copy (written first), or no job directory on the host (the launch creates it before the wrapper). */
  async neverLaunched(job: Job): Promise<boolean> {
    if (localSpecMissing(job.job_dir)) return true;
    const { host } = this.hostFor(job.host);
    const r = await host.run(JOB_DIR_PRESENT, [await this.remoteDir(job)]);
    return r.code === 0 && keyValues(r.stdout.toString()).present === "0";
  }

  async observe(job: Job): Promise<Observation> {
    const { host } = this.hostFor(job.host);
    try {
      const dir = await this.remoteDir(job);
      const scan = dir.slice(0, dir.lastIndexOf("/"));
      const report = await host.observe(dir, scan);
      return toObservation(job, report.jobs.get(dir), report.bootId);
    } catch (e) {
      if (isConnectionError(e))
        return unreachableObservation(`host ${host.name} is unreachable: ${e.message}`);
      throw e;
    }
  }

  async stopLeftover(job: Job, graceSeconds: number): Promise<LeftoverStop> {
    return this.cancel(job, graceSeconds);
  }

  async cancel(job: Job, graceSeconds: number): Promise<LeftoverStop> {
    const { host } = this.hostFor(job.host);
    const dir = await this.remoteDir(job);
    // cancel.sh, as locally: the wrapper sends the one TERM (woken now); a waiting job is taken out of line after its
    // cancel file exists, so its command never starts; a wrapper that is gone has its group stopped by the script.
    const queued = job.spec.queue !== null || (job.spec.resources ?? []).length > 0;
    const r = await host.run(CANCEL_TEXT, [
      dir,
      String(Math.max(0, Math.ceil(graceSeconds))),
      queued ? queueDirOfJob(dir) : "",
    ]);
    if (r.code !== 0) {
      throw new AwaitlessError(
        "connection_failed",
        `could not signal job ${job.job_id} on ${host.name}: ${r.stderr.toString().trim() || `exit ${r.code}`}`,
        {
          cli: "the cancel request is recorded; run `awaitless cancel` again once the host answers",
          mcp: "The cancel request is recorded; call cancel_job again once the host answers.",
        },
        { host: host.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
      );
    }
    return parseCancelOutcome(r.stdout.toString());
  }

  async queueSnapshot(hostName: string | null): Promise<QueueSnapshot> {
    return readRemoteQueueSnapshot(this.hostFor(hostName).host);
  }

  async readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail> {
    return readRemoteTail(this.hostFor(job.host).host, await this.remoteDir(job), stream, maxBytes);
  }

  async scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan> {
    return scanRemoteLog(this.hostFor(job.host).host, await this.remoteDir(job), stream, query);
  }

  async collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]> {
    return collectRemoteArtifacts(
      this.hostFor(job.host).host,
      job.spec.cwd,
      job.spec.artifacts,
      maxInlineBytes,
    );
  }

  async secretValues(job: Job): Promise<Record<string, string>> {
    if (job.spec.secret_env.length === 0) return {};
    try {
      return parseSpecSecrets(readFileSync(join(job.job_dir, "spec.sh"), "utf8"), job.spec.secret_env);
    } catch {
      return {};
    }
  }

  async waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal, anyFile = false): Promise<void> {
    const { watch } = this.hostFor(job.host);
    let dir: string;
    try {
      dir = await this.remoteDir(job);
    } catch {
      // Unreachable before the root is known: just let the caller's slice pass.
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(0, timeoutMs));
        signal?.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        });
      });
      return;
    }
    return watch.wait(dir, timeoutMs, signal, anyFile);
  }

  /** The host's copy first, then the local one: an unreachable host (connection_failed) leaves both for a later gc. */
  async remove(job: Job): Promise<void> {
    const { host } = this.hostFor(job.host);
    await host.run(REMOVE, [await this.remoteDir(job)]);
    rmSync(job.job_dir, { recursive: true, force: true });
  }

  /** Closes every connection and watch channel (tests; MCP shutdown). */
  close(): void {
    for (const { host, watch } of this.hosts.values()) {
      watch.close();
      host.close();
    }
  }
}
