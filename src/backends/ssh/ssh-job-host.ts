// One SSH host as a JobHost: the same wrapper and on-disk protocol as locally, in <remote_job_dir>/jobs/<job_id>,
// each operation one host program over the host's shared connection (SshHost), waits on its watch channel.
import type { LogTail, QueueSnapshot, Stream } from "../../core/backend/backend.ts";
import { parseCancelOutcome } from "../../core/backend/backend.ts";
import type { LogQuery, LogScan } from "../../core/logs/log-query.ts";
import type { HostBackendId } from "../../core/model/backend-id.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { ArtifactEntry } from "../../core/model/job.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { LeftoverStop } from "../../core/model/service-api.ts";
import { JobDirRefused, jobDirShape } from "../../core/util/job-dir-guard.ts";
import { isNoSpace, noSpaceError } from "../../core/util/no-space.ts";
import { humanBytes } from "../../core/util/text.ts";
import { JOB_DIR_PRESENT, keyValues, launchScript, REMOVE, SETTLE } from "../../wrapper/host-scripts.ts";
import { CANCEL_TEXT, WRAPPER_SHA256 } from "../../wrapper/scripts.ts";
import type { HostRoot, JobHost, WrapperIdentity } from "../host/job-host.ts";
import { unreachableObservation } from "../host/wrapper-backend.ts";
import { collectRemoteArtifacts } from "./ssh-artifacts.ts";
import type { SshHost } from "./ssh-host.ts";
import { readRemoteTail, scanRemoteLog } from "./ssh-logs.ts";
import { toObservation } from "./ssh-observe.ts";
import { queueDirOf, readRemoteQueueSnapshot } from "./ssh-queue.ts";
import { SshWatch } from "./ssh-watch.ts";

export function isConnectionError(e: unknown): e is AwaitlessError {
  return e instanceof AwaitlessError && e.code === "connection_failed";
}

export class SshJobHost implements JobHost {
  readonly watch: SshWatch;

  constructor(readonly host: SshHost) {
    this.watch = new SshWatch(host);
  }

  get name(): string {
    return this.host.name;
  }

  async prepare(): Promise<HostRoot> {
    const { root } = await this.host.prepare();
    return { jobsDir: `${root}/jobs`, queueDir: queueDirOf(root) };
  }

  async start(dir: string, text: string): Promise<HostBackendId> {
    const host = this.host;
    const prepared = await host.prepare();
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

  /** No job directory on the host (the launch creates it before the wrapper). */
  async neverStarted(dir: string): Promise<boolean> {
    const r = await this.host.run(JOB_DIR_PRESENT, [dir]);
    return r.code === 0 && keyValues(r.stdout.toString()).present === "0";
  }

  async observe(dir: string, known: WrapperIdentity): Promise<Observation> {
    try {
      const scan = dir.slice(0, dir.lastIndexOf("/"));
      const report = await this.host.observe(dir, scan);
      return toObservation(known, report.jobs.get(dir), report.bootId);
    } catch (e) {
      if (isConnectionError(e))
        return unreachableObservation(`host ${this.name} is unreachable: ${e.message}`);
      throw e;
    }
  }

  async cancel(
    dir: string,
    graceSeconds: number,
    queueDir: string | null,
    jobId: string,
  ): Promise<LeftoverStop> {
    const r = await this.host.run(CANCEL_TEXT, [dir, String(graceSeconds), queueDir ?? "", jobId]);
    if (r.code !== 0) {
      throw new AwaitlessError(
        "connection_failed",
        `could not signal the job in ${dir} on ${this.name}: ${r.stderr.toString().trim() || `exit ${r.code}`}`,
        {
          cli: "the cancel request is recorded; run `awaitless cancel` again once the host answers",
          mcp: "The cancel request is recorded; call cancel_job again once the host answers.",
        },
        { host: this.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
      );
    }
    return parseCancelOutcome(r.stdout.toString());
  }

  queueSnapshot(): Promise<QueueSnapshot> {
    return readRemoteQueueSnapshot(this.host);
  }

  readTail(dir: string, stream: Stream, maxBytes: number): Promise<LogTail> {
    return readRemoteTail(this.host, dir, stream, maxBytes);
  }

  scanLog(dir: string, stream: Stream, query: LogQuery): Promise<LogScan> {
    return scanRemoteLog(this.host, dir, stream, query);
  }

  collectArtifacts(
    cwd: string,
    declared: readonly string[],
    maxInlineBytes: number,
  ): Promise<ArtifactEntry[]> {
    return collectRemoteArtifacts(this.host, cwd, declared, maxInlineBytes);
  }

  async waitForChange(
    dir: string,
    timeoutMs: number,
    signal?: AbortSignal,
    anyFile = false,
  ): Promise<boolean> {
    await this.watch.wait(dir, timeoutMs, signal, anyFile);
    return false;
  }

  /** The path's text is checked here, the rest on the host by remove.sh (the same rule, physically). */
  async remove(dir: string, jobId: string): Promise<void> {
    jobDirShape(dir, jobId);
    const r = await this.host.run(REMOVE, [dir, jobId]);
    const refused = keyValues(r.stdout.toString()).refused;
    if (refused !== undefined) {
      throw new JobDirRefused(
        "invalid_argument",
        `refusing to remove ${JSON.stringify(dir)} on ${this.host.name}: ${refused}`,
        "nothing was touched there: a job's files are only ever removed in its own directory",
        { directory: dir },
      );
    }
    if (r.code !== 0) {
      throw new AwaitlessError(
        "internal",
        `could not remove ${dir} on ${this.host.name}: ${r.stderr.toString().trim().slice(0, 500) || `exit ${r.code}`}`,
        "check the permissions of remote_job_dir on the host; gc tries again next time",
      );
    }
  }

  async writeFinal(dir: string, outcome: "ok" | "failed", attempt: number): Promise<boolean> {
    const r = await this.host.run(SETTLE, [dir, outcome, String(attempt)]);
    return r.code === 0 && keyValues(r.stdout.toString()).settled === "1";
  }

  /** Closes the watch channel and the connection (tests; MCP shutdown). */
  close(): void {
    this.watch.close();
    this.host.close();
  }
}
