// This machine as a JobHost: launches the wrapper detached (own session), reads its files, watches with inotify.

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
import type { LogTail, QueueSnapshot, Stream } from "../../core/backend/backend.ts";
import { parseCancelOutcome } from "../../core/backend/backend.ts";
import type { LogQuery, LogScan } from "../../core/logs/log-query.ts";
import type { HostBackendId } from "../../core/model/backend-id.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import type { ArtifactEntry } from "../../core/model/job.ts";
import type { Observation } from "../../core/model/observation.ts";
import type { LeftoverStop } from "../../core/model/service-api.ts";
import { removeHostJobDir } from "../../core/util/job-dir-guard.ts";
import { freeSpace, isNoSpace, noSpaceError } from "../../core/util/no-space.ts";
import { assertTrustedDir, makeOwnDir } from "../../core/util/trusted-dir.ts";
import {
  EXIT_RESERVATION,
  FILES,
  readExitRecord,
  readHeartbeat,
  readLeftovers,
  readQueued,
  readStarted,
} from "../../wrapper/protocol.ts";
import { openAppend, replaceFile } from "../../wrapper/safe-files.ts";
import { sha256Hex } from "../../wrapper/sha256.ts";
import type { HostRoot, JobHost, WrapperIdentity } from "../host/job-host.ts";
import { isMissing, writeLocalSpec } from "../job-spec.ts";
import { observationFromRecords } from "../observation-from-records.ts";
import { dropJobCgroups, primeCgroupMoves } from "./job-cgroups.ts";
import { readLocalTail, scanLocalLog } from "./local-logs.ts";
import { localQueueDir } from "./local-queue.ts";
import { isProcessAlive, localBootId, processStartTime } from "./proc.ts";

export interface LocalHostOptions {
  dataDir: string;
  /** The POSIX shell that runs the wrapper and the host programs. */
  shell: string;
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

/**
 * The heartbeat as the wrapper last wrote it, or, while a running command's first output is newer than the wrapper's
 * next size check (seconds away at the start), with that output's sizes and time read from the files: "no output
 * yet" is never said of a job that wrote something.
 */
function withOutputSeen(
  dir: string,
  hb: ReturnType<typeof readHeartbeat>,
  running: boolean,
): ReturnType<typeof readHeartbeat> {
  if (hb === null || !running || hb.stdoutBytes + hb.stderrBytes > 0) return hb;
  const size = (stream: string) => {
    try {
      const st = statSync(join(dir, stream));
      return { bytes: st.size, at: st.mtimeMs / 1000 };
    } catch {
      return { bytes: 0, at: 0 };
    }
  };
  const out = size(FILES.stdout);
  const err = size(FILES.stderr);
  if (out.bytes + err.bytes === 0) return hb;
  return {
    ...hb,
    stdoutBytes: out.bytes,
    stderrBytes: err.bytes,
    lastChangeEpochSeconds: Math.max(
      hb.lastChangeEpochSeconds,
      out.bytes > 0 ? out.at : 0,
      err.bytes > 0 ? err.at : 0,
    ),
  };
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

export class LocalHost implements JobHost {
  readonly name = "this machine";
  private binChecked = false;
  private queuesChecked = false;

  constructor(private readonly opts: LocalHostOptions) {}

  /**
   * Nothing to make before a launch (start checks and creates what it writes). The queue directory, where wrappers
   * read each other's entries (and signal the processes they name), must be trusted like the rest of the data
   * directory: ours or root's, not writable by others (checked once per process; a missing one the wrapper makes 0700).
   */
  async prepare(): Promise<HostRoot> {
    const queueDir = localQueueDir(this.opts.dataDir);
    if (!this.queuesChecked) {
      assertTrustedDir(queueDir, "the data directory's queues/", "launch_failed");
      this.queuesChecked = true;
    }
    return { jobsDir: join(this.opts.dataDir, "jobs"), queueDir };
  }

  /**
   * The wrapper in bin/, named by its content hash, installed (written then renamed) when missing and verified
   * against its SHA-256 before every launch: a changed file is replaced, never run.
   */
  private ensureWrapper(): string {
    const { WRAPPER_SHA256, WRAPPER_TEXT } = scripts();
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

  /** `dir` is job.job_dir: its parent (jobs/ or --log-dir) must be trusted. */
  async start(dir: string, text: string): Promise<HostBackendId> {
    const primed = primeCgroupMoves();
    const parent = dirname(dir);
    const room = freeSpace(parent);
    if (room !== null && room.free < LAUNCH_HEADROOM_BYTES) {
      throw noSpaceError(parent, `the job directory ${dir}`, "less than 64 KiB free");
    }
    const logDir = parent !== join(this.opts.dataDir, "jobs");
    let wrapper: string;
    try {
      wrapper = this.ensureWrapper();
      // The parent (jobs/ or --log-dir) is trusted, so the job directory made in it cannot be swapped under us.
      mkdirSync(parent, { recursive: true, mode: 0o700 });
      assertTrustedDir(parent, logDir ? "--log-dir" : "the data directory's jobs/", "launch_failed");
      makeOwnDir(dir);
      writeLocalSpec(dir, text);
      replaceFile(join(dir, EXIT_RESERVATION.name), EXIT_RESERVATION.text, 0o600);
    } catch (e) {
      if (isNoSpace(e)) throw noSpaceError(parent, `the job directory ${dir}`, e);
      if (e instanceof AwaitlessError) throw e;
      throw new AwaitlessError(
        "launch_failed",
        `could not prepare the job directory ${dir}: ${(e as Error).message}`,
        "check free disk space and permissions of the data directory",
      );
    }
    let log: number;
    try {
      log = openAppend(join(dir, "wrapper.log"), 0o600);
    } catch (e) {
      throw new AwaitlessError(
        "launch_failed",
        `could not open ${join(dir, "wrapper.log")}: ${(e as Error).message}`,
        "remove whatever is at that path (a symlink is never written through), then launch again",
      );
    }
    try {
      // detached: the wrapper gets its own session (setsid), so it outlives this process and its terminal. The
      // runtime's own spawn: node:child_process would cost a launch more to import than the spawn itself.
      const clock = launchClock();
      const child = Bun.spawn([this.opts.shell, wrapper, dir], {
        detached: true,
        stdio: ["ignore", log, log],
        cwd: "/",
        env: {
          ...outsideJobs(process.env),
          ...(clock ? { AWL_LAUNCH_CLOCK: clock } : {}),
          ...(primed ? { AWL_LAUNCH_PRIMED: "1" } : {}),
        },
      });
      child.unref();
      const pid = child.pid;
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
  async neverStarted(dir: string): Promise<boolean> {
    return isMissing(join(dir, FILES.wrapperLog));
  }

  async observe(dir: string, known: WrapperIdentity): Promise<Observation> {
    const exit = readExitRecord(dir);
    const started = readStarted(dir);
    const hb = withOutputSeen(dir, readHeartbeat(dir), started !== null && exit === null);
    const queued = started ? null : readQueued(dir);
    let wrapperAlive: boolean | null = null;
    // the launch's own answer first: `started` is a file anyone who can write the directory could forge
    const pid = known.wrapperPid ?? started?.wrapperPid;
    if (pid) {
      const expectStart = known.wrapperPid ? known.procStart : started?.procStart;
      wrapperAlive = isProcessAlive(pid, expectStart ?? null);
    }
    // The wrapper may have written its exit record and exited between the two reads above.
    const x = exit ?? (wrapperAlive === false ? readExitRecord(dir) : null);
    // an exit record while the wrapper lives: is the command still running? (reconcile rule 2a)
    const commandAlive =
      x && wrapperAlive === true && started
        ? isProcessAlive(started.pid, started.pidStart ?? null)
        : undefined;
    return observationFromRecords(
      { started, exit: x, heartbeat: hb, queued, leftovers: x?.leftovers ? readLeftovers(dir) : null },
      {
        wrapperAlive,
        ...(commandAlive !== undefined ? { commandAlive } : {}),
        bootIdNow: localBootId(),
        startedAt: (s) => fileTime(join(dir, FILES.started), s),
        finishedAt: (s) => fileTime(join(dir, FILES.exit), s),
      },
    );
  }

  async cancel(
    dir: string,
    graceSeconds: number,
    queueDir: string | null,
    jobId: string,
  ): Promise<LeftoverStop> {
    const r = await runDetached(this.opts.shell, [
      "-c",
      scripts().CANCEL_TEXT,
      "awaitless-cancel",
      dir,
      String(graceSeconds),
      queueDir ?? "",
      jobId,
    ]);
    if (r.code !== 0) {
      throw new AwaitlessError(
        "internal",
        `could not record the cancel request of the job in ${dir}: ${r.stderr.trim() || `exit ${r.code}`}`,
        "check free disk space and permissions of the data directory, then cancel again",
      );
    }
    return parseCancelOutcome(r.stdout);
  }

  /** queue-snapshot.sh, as on SSH hosts: entries judged live by the wrappers' own readers. */
  async queueSnapshot(): Promise<QueueSnapshot> {
    await this.prepare();
    const { parseQueueSnapshot, QUEUE_SNAPSHOT, script } = await hostScripts();
    const r = await runDetached(
      this.opts.shell,
      ["-s"],
      script(QUEUE_SNAPSHOT, [localQueueDir(this.opts.dataDir)]),
    );
    if (r.code !== 0) {
      throw new AwaitlessError(
        "internal",
        `could not list the queues: ${r.stderr.trim() || `exit ${r.code}`}`,
        "check the data directory's permissions",
      );
    }
    return parseQueueSnapshot(r.stdout);
  }

  async readTail(dir: string, stream: Stream, maxBytes: number): Promise<LogTail> {
    return readLocalTail(dir, stream, maxBytes);
  }

  async scanLog(dir: string, stream: Stream, query: LogQuery): Promise<LogScan> {
    return scanLocalLog(dir, stream, query);
  }

  async collectArtifacts(
    cwd: string,
    declared: readonly string[],
    maxInlineBytes: number,
  ): Promise<ArtifactEntry[]> {
    return (await import("./artifacts-local.ts")).collectLocalArtifacts(cwd, declared, { maxInlineBytes });
  }

  waitForChange(dir: string, timeoutMs: number, signal?: AbortSignal, anyFile = false): Promise<boolean> {
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
        watcher = watch(dir, { persistent: true }, (_event, name) => {
          if (anyFile || (name !== null && LIFECYCLE_FILES.has(String(name)))) done();
        });
        watcher.on("error", () => undefined);
        armed = true;
      } catch {
        // No directory yet (launch in progress) or no inotify: the timer is the fallback.
      }
      // A file that appeared just before the watch started would be missed: check once after arming.
      if (!anyFile && existsSync(join(dir, "exit"))) done();
    });
  }

  async writeFinal(dir: string, outcome: "ok" | "failed", attempt: number): Promise<boolean> {
    const { SETTLE, script } = await hostScripts();
    const r = await runDetached(this.opts.shell, ["-s"], script(SETTLE, [dir, outcome, String(attempt)]));
    return r.code === 0 && r.stdout.includes("settled=1");
  }

  async remove(dir: string, jobId: string): Promise<void> {
    dropJobCgroups(dir);
    removeHostJobDir(dir, jobId);
  }
}

/**
 * The environment without the variables that mark a job's processes (wrapper.sh exports them to its command): a job
 * launched, or a program run, by a client that itself runs inside a job is not that job's process.
 */
function outsideJobs(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { AWAITLESS_JOB_ID: _i, AWAITLESS_JOB_DIR: _d, AWAITLESS_PROGRESS_FILE: _p, ...rest } = env;
  return rest;
}
/** The host programs, loaded when a queue or a retry's dependents first need one (most commands run none). */
const hostScripts = () => import("../../wrapper/host-scripts.ts");

/** Runs a shell in its own session (cancel.sh's KILL watcher, when the wrapper is gone, must outlive this process). */
function runDetached(
  shell: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    const child = childProcess().spawn(shell, args, {
      detached: true,
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      cwd: "/",
      env: outsideJobs(process.env),
    });
    child.stdout?.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr?.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.once("error", (e) => resolve({ code: -1, stdout, stderr: e.message }));
    child.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

/** The embedded scripts when a launch or cancel first needs them: assembling and hashing them cost every start. */
function scripts(): typeof import("../../wrapper/scripts.ts") {
  return require("../../wrapper/scripts.ts") as typeof import("../../wrapper/scripts.ts");
}

/** node:child_process when a process is first started: importing it costs a command's start, and status starts none. */
function childProcess(): typeof import("node:child_process") {
  return require("node:child_process") as typeof import("node:child_process");
}

/**
 * The wrapper's AWL_LAUNCH_CLOCK: this machine's clocks read now, EPOCH_CS:UPTIME_CS:BOOT_ID (epoch and
 * /proc/uptime in centiseconds), from which the wrapper takes its start's epoch without running `date` (awl_start_clock
 * in src/wrapper/job/setup.sh). Null without /proc: the wrapper then asks `date`.
 */
function launchClock(): string | null {
  const boot = localBootId();
  if (!boot) return null;
  try {
    const up = /^(\d+)\.(\d\d)\s/.exec(readFileSync("/proc/uptime", "utf8"));
    if (!up) return null;
    return `${Math.floor(Date.now() / 10)}:${Number(up[1]) * 100 + Number(up[2])}:${boot}`;
  } catch {
    return null;
  }
}
