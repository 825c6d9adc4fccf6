// The local backend: launches the wrapper detached (own session) on this machine and reads its files.

import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  type FSWatcher,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  watch,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
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
import { freeSpace, isNoSpace, noSpaceError } from "../../core/store-errors.ts";
import { assertTrustedDir, makeOwnDir } from "../../core/trusted-dir.ts";
import {
  CANCEL_TEXT,
  EXIT_RESERVATION,
  FILES,
  readExitRecord,
  readHeartbeat,
  readQueued,
  readStarted,
  WRAPPER_SHA256,
  WRAPPER_TEXT,
} from "../../wrapper/protocol.ts";
import { openAppend, replaceFile } from "../../wrapper/safe-files.ts";
import { sha256Hex } from "../../wrapper/sha256.ts";
import { isMissing, jobSpecText, writeLocalSpec } from "../job-spec.ts";
import { observationFromRecords } from "../observation.ts";
import { collectLocalArtifacts } from "./artifacts-local.ts";
import { readLocalTail, scanLocalLog } from "./local-logs.ts";
import { localQueueDir, readQueueSnapshot } from "./local-queue.ts";
import { isProcessAlive, localBootId, processStartTime } from "./proc.ts";
import { parseSpecSecrets } from "./spec-secrets.ts";

export interface LocalBackendOptions {
  dataDir: string;
  /** The POSIX shell that runs the wrapper. */
  shell: string;
  tickSeconds?: number;
  heartbeatSeconds?: number;
  /** Lock mechanism when the queue directory is first used (tests force mkdir); default auto. */
  queueLock?: "auto" | "mkdir";
}

/** Below this much free space a launch is refused before it writes anything (its records need a few blocks). */
const LAUNCH_HEADROOM_BYTES = 64 * 1024;

/** File names the waiters care about: the lifecycle, not the output. */
const LIFECYCLE_FILES = new Set(["started", "exit", "cancel", "queued"]);

/** A record's time with the file's millisecond mtime when it agrees with the record's whole seconds. */
function fileSha256(path: string): string | null {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return null;
  }
}

function fileTime(path: string, epochSeconds: number): string {
  try {
    const ms = statSync(path).mtimeMs;
    if (Math.abs(ms / 1000 - epochSeconds) < 2) return new Date(ms).toISOString();
  } catch {
    // fall back to the record's own time
  }
  return new Date(epochSeconds * 1000).toISOString();
}

export class LocalBackend implements Backend {
  readonly name = "local" as const;
  readonly supportsAdmission = true;
  private binChecked = false;

  constructor(private readonly opts: LocalBackendOptions) {}

  /**
   * The wrapper in bin/, named by its content hash, installed (written then renamed) when missing and verified
   * against its SHA-256 before every launch: a changed file is replaced, never run.
   */
  private ensureWrapper(): string {
    const dir = join(this.opts.dataDir, "bin");
    const path = join(dir, `wrapper-${WRAPPER_SHA256.slice(0, 16)}.sh`);
    if (!this.binChecked) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      assertTrustedDir(dir, "the data directory's bin/", "launch_failed");
      this.binChecked = true;
    }
    if (fileSha256(path) !== WRAPPER_SHA256) {
      const tmp = `${path}.${process.pid}.tmp`;
      rmSync(tmp, { force: true });
      writeFileSync(tmp, WRAPPER_TEXT, { mode: 0o600, flag: "wx" });
      renameSync(tmp, path);
    }
    return path;
  }

  async launch(input: LaunchInput): Promise<BackendId> {
    const { job } = input;
    const parent = dirname(job.job_dir);
    const room = freeSpace(parent);
    if (room !== null && room.free < LAUNCH_HEADROOM_BYTES) {
      throw noSpaceError(parent, `the job directory ${job.job_dir}`, "less than 64 KiB free");
    }
    let wrapper: string;
    try {
      wrapper = this.ensureWrapper();
      const text = jobSpecText(job, input, {
        tickSeconds: this.opts.tickSeconds ?? 1,
        heartbeatSeconds: this.opts.heartbeatSeconds ?? HEARTBEAT_SECONDS,
        admissionDir: localQueueDir(this.opts.dataDir),
        admissionLock: this.opts.queueLock ?? "auto",
      });
      // The parent (jobs/ or --log-dir) is trusted, so the job directory made in it cannot be swapped under us.
      mkdirSync(parent, { recursive: true, mode: 0o700 });
      assertTrustedDir(
        parent,
        job.spec.log_dir ? "--log-dir" : "the data directory's jobs/",
        "launch_failed",
      );
      makeOwnDir(job.job_dir);
      writeLocalSpec(job.job_dir, text);
      replaceFile(join(job.job_dir, EXIT_RESERVATION.name), EXIT_RESERVATION.text, 0o600);
    } catch (e) {
      if (isNoSpace(e)) throw noSpaceError(parent, `the job directory ${job.job_dir}`, e);
      if (e instanceof AwaitlessError) throw e;
      throw new AwaitlessError(
        "launch_failed",
        `could not prepare the job directory ${job.job_dir}: ${(e as Error).message}`,
        "check free disk space and permissions of the data directory",
      );
    }
    let log: number;
    try {
      log = openAppend(join(job.job_dir, "wrapper.log"), 0o600);
    } catch (e) {
      throw new AwaitlessError(
        "launch_failed",
        `could not open ${join(job.job_dir, "wrapper.log")}: ${(e as Error).message}`,
        "remove whatever is at that path (a symlink is never written through), then launch again",
      );
    }
    try {
      // detached: the wrapper gets its own session, so it outlives this process and its terminal.
      const child = spawn(this.opts.shell, [wrapper, job.job_dir], {
        detached: true,
        stdio: ["ignore", log, log],
        cwd: "/",
        env: process.env,
      });
      const pid = await new Promise<number>((resolve, reject) => {
        child.once("spawn", () => resolve(child.pid!));
        child.once("error", reject);
      });
      child.unref();
      const start = processStartTime(pid);
      return { wrapper_pid: pid, ...(start ? { proc_start: start } : {}) };
    } catch (e) {
      throw new AwaitlessError(
        "launch_failed",
        `could not start the job wrapper with ${this.opts.shell}: ${(e as Error).message}`,
        "check that a POSIX shell exists at that path (AWAITLESS_SHELL overrides it)",
      );
    } finally {
      closeSync(log);
    }
  }

  /** The launch opens wrapper.log before it spawns the wrapper: without it, no wrapper of this job ever started. */
  async neverLaunched(job: Job): Promise<boolean> {
    return isMissing(join(job.job_dir, FILES.wrapperLog));
  }

  async observe(job: Job): Promise<Observation> {
    const dir = job.job_dir;
    const exit = readExitRecord(dir);
    const started = readStarted(dir);
    const hb = readHeartbeat(dir);
    const queued = started ? null : readQueued(dir);
    let wrapperAlive: boolean | null = null;
    const pid = started?.wrapperPid ?? job.backend_id?.wrapper_pid;
    if (pid) {
      const expectStart = started?.procStart ?? (job.backend_id?.proc_start as string | undefined);
      wrapperAlive = isProcessAlive(pid, expectStart ?? null);
    }
    // The wrapper may have written its exit record and exited between the two reads above.
    const x = exit ?? (wrapperAlive === false ? readExitRecord(dir) : null);
    return observationFromRecords(
      { started, exit: x, heartbeat: hb, queued },
      {
        wrapperAlive,
        bootIdNow: localBootId(),
        startedAt: (s) => fileTime(join(dir, FILES.started), s),
        finishedAt: (s) => fileTime(join(dir, FILES.exit), s),
      },
    );
  }

  async cancel(job: Job, graceSeconds: number): Promise<LeftoverStop | undefined> {
    const dir = job.job_dir;
    if (!existsSync(dir)) return undefined;
    // The same script as on SSH hosts: only the wrapper signals (one TERM, KILL after the grace), so this survives
    // our death; a waiting job is taken out of line; a wrapper that is gone has its group stopped from here.
    const queued = job.spec.queue !== null || (job.spec.resources ?? []).length > 0;
    const args = [
      dir,
      String(Math.max(0, Math.ceil(graceSeconds))),
      queued ? localQueueDir(this.opts.dataDir) : "",
    ];
    const r = await runCancelScript(this.opts.shell, args);
    if (r.code !== 0) {
      throw new AwaitlessError(
        "internal",
        `could not record the cancel request of job ${job.job_id}: ${r.stderr.trim() || `exit ${r.code}`}`,
        "check free disk space and permissions of the data directory, then cancel again",
      );
    }
    return parseCancelOutcome(r.stdout);
  }

  async stopLeftover(job: Job, graceSeconds: number): Promise<LeftoverStop> {
    if (!existsSync(job.job_dir)) return { action: "none", detail: "the job directory is gone" };
    return (await this.cancel(job, graceSeconds)) ?? { action: "none", detail: "nothing to stop" };
  }

  async queueSnapshot(_host: string | null): Promise<QueueSnapshot> {
    return readQueueSnapshot(localQueueDir(this.opts.dataDir));
  }

  async readTail(job: Job, stream: Stream, maxBytes: number): Promise<LogTail> {
    return readLocalTail(job.job_dir, stream, maxBytes);
  }

  async scanLog(job: Job, stream: Stream, query: LogQuery): Promise<LogScan> {
    return scanLocalLog(job.job_dir, stream, query);
  }

  async collectArtifacts(job: Job, maxInlineBytes: number): Promise<ArtifactEntry[]> {
    return collectLocalArtifacts(job.spec.cwd, job.spec.artifacts, { maxInlineBytes });
  }

  async secretValues(job: Job): Promise<Record<string, string>> {
    if (job.spec.secret_env.length === 0) return {};
    try {
      return parseSpecSecrets(readFileSync(join(job.job_dir, "spec.sh"), "utf8"), job.spec.secret_env);
    } catch {
      return {};
    }
  }

  waitForChange(job: Job, timeoutMs: number, signal?: AbortSignal, anyFile = false): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let watcher: FSWatcher | null = null;
      let armed = false;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        watcher?.close();
        resolve(armed);
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      if (signal?.aborted) return done();
      signal?.addEventListener("abort", done, { once: true });
      try {
        watcher = watch(job.job_dir, { persistent: true }, (_event, name) => {
          if (anyFile || (name !== null && LIFECYCLE_FILES.has(String(name)))) done();
        });
        watcher.on("error", () => undefined);
        armed = true;
      } catch {
        // No directory yet (launch in progress) or no inotify: the timer is the fallback.
      }
      // A file that appeared just before the watch started would be missed: check once after arming.
      if (!anyFile && existsSync(join(job.job_dir, "exit"))) done();
    });
  }

  async remove(job: Job): Promise<void> {
    rmSync(job.job_dir, { recursive: true, force: true });
  }
}

/** Runs cancel.sh in its own session (its KILL watcher, when the wrapper is gone, must outlive this process). */
function runCancelScript(
  shell: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    const child = spawn(shell, ["-c", CANCEL_TEXT, "awaitless-cancel", ...args], {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      cwd: "/",
    });
    child.stdout?.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr?.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.once("error", (e) => resolve({ code: -1, stdout, stderr: e.message }));
    child.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
