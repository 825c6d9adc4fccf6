// Test harness for wrapper.sh: one temp job per test, the wrapper started detached under a chosen shell,
// condition waits with deadlines, and disposal that kills every process the job started (by PID / group).

import { afterAll, describe, test } from "bun:test";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newJobId } from "../../src/core/model/ids.ts";
import {
  type ExitRecord,
  readExitRecord,
  readStarted,
  renderSpec,
  type SpecInput,
} from "../../src/wrapper/protocol.ts";
import { WRAPPER_TEXT } from "../../src/wrapper/scripts.ts";
import { busyboxAppletDir } from "../helpers/busybox.ts";
import { until } from "../helpers/until.ts";

export interface ShellCase {
  name: string;
  argv: string[];
  available: boolean;
  /** The wrapper (and so the command) gets a PATH of busybox applets only. */
  busyboxOnly?: boolean;
}

// Shared per test file: the wrapper script and helper scripts. Bun's test runner fires no process exit hooks,
// so each file removes it in afterAll (registered by describeEachShell) and the next file makes a new one.
let scratch: string | undefined;

function scratchDir(): string {
  if (scratch === undefined) {
    scratch = mkdtempSync(join(tmpdir(), "awl-wrapper-test-"));
    // where launchers put it (bin/wrapper-HASH.sh): a wrapper is known by its command line (prelude's awl_is_wrapper_of)
    mkdirSync(join(scratch, "bin"));
    writeFileSync(join(scratch, "bin", "wrapper-test.sh"), WRAPPER_TEXT, { mode: 0o600 });
  }
  return scratch;
}

function removeScratch(): void {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
}

// A PATH holding only busybox applets: the wrapper must also work where busybox provides every utility.
function busyboxOnlyPath(): string {
  return busyboxAppletDir(join(scratchDir(), "busybox-bin"))!;
}

/** The environment the shell's scripts run with (a PATH of busybox applets only for the busybox-only case). */
export function shellEnv(shell: ShellCase): Record<string, string | undefined> {
  return shell.busyboxOnly ? { ...process.env, PATH: busyboxOnlyPath() } : process.env;
}

export const SHELLS: ShellCase[] = [
  { name: "dash", argv: ["dash"] },
  { name: "bash", argv: ["bash"] },
  { name: "busybox sh", argv: ["busybox", "sh"] },
  { name: "busybox sh, busybox utilities", argv: ["busybox", "sh"], busyboxOnly: true },
].map((shell) => {
  // Absolute, because the busybox-only case gives the wrapper a PATH that Bun would also search.
  const program = Bun.which(shell.argv[0]!);
  return { ...shell, argv: [program ?? shell.argv[0]!, ...shell.argv.slice(1)], available: program !== null };
});

/** Defines `body` once per shell; a missing shell is skipped with a message, or fails when AWAITLESS_REQUIRE_ALL=1. */
export function describeEachShell(title: string, body: (shell: ShellCase) => void): void {
  afterAll(removeScratch);
  for (const shell of SHELLS) {
    const name = `${title} [${shell.name}]`;
    if (shell.available) {
      describe.concurrent(name, () => body(shell));
    } else if (process.env.AWAITLESS_REQUIRE_ALL === "1") {
      test(name, () => {
        throw new Error(`${shell.argv[0]} is not installed (apt-get install -y dash busybox bash)`);
      });
    } else {
      console.warn(
        `skipping "${name}": ${shell.argv[0]} is not installed (apt-get install -y dash busybox bash)`,
      );
      describe.skip(name, () => body(shell));
    }
  }
}

/** Write an executable helper script into the shared scratch directory and return its path. */
export function helperScript(name: string, body: string): string {
  const path = join(scratchDir(), name);
  // Shells' copies of a test run concurrently and may be executing this script: never rewrite it in place
  // (a truncated script read mid-run breaks, ETXTBSY), write a new file and rename it over the old one.
  // The mode is set before the rename: a script renamed in first and made executable after fails an exec that
  // lands in between (exit 126).
  const text = `#!/bin/sh\n${body}\n`;
  try {
    if (readFileSync(path, "utf8") === text) return path;
  } catch {}
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  writeFileSync(tmp, text);
  chmodSync(tmp, 0o755);
  renameSync(tmp, path);
  return path;
}

/** The tests' one poll-until (test/helpers/until.ts), under the name the wrapper tests use. */
export function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  return until(what, probe, timeoutMs, 20) as Promise<T>;
}

/** A process is gone when it no longer exists or is a zombie (this machine's init may never reap orphans). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

function killQuietly(target: number): void {
  try {
    process.kill(target, "SIGKILL");
  } catch {
    // already gone
  }
}

export type JobOptions = Partial<SpecInput> & Pick<SpecInput, "argv">;

export class Job {
  readonly root: string;
  readonly dir: string;
  readonly work: string;
  /** Extra PIDs (e.g. grandchildren a test learned about) killed on disposal. */
  readonly extraPids: number[] = [];
  /**
   * Its own job ID, from the real generator: the job's processes are found by it (AWAITLESS_JOB_ID, the job's cgroup's
   * name), and queue slots are named after it (running/JOB_ID).
   */
  readonly jobId = newJobId();
  /** The wrapper's process ID (it leads its own session), once started. */
  wrapperPid = 0;

  constructor() {
    this.root = mkdtempSync(join(tmpdir(), "awl-job-"));
    // named after the job, as launchers name job directories
    this.dir = join(this.root, this.jobId);
    this.work = join(this.root, "work");
    mkdirSync(this.dir, { mode: 0o700 });
    mkdirSync(this.work, { mode: 0o700 });
  }

  /** Render spec.sh (cwd defaults to this job's work directory) and start the wrapper detached. */
  start(shell: ShellCase, options: JobOptions, env: Record<string, string> = {}): this {
    const spec = renderSpec({
      jobId: this.jobId,
      cwd: this.work,
      env: {},
      tickSeconds: 1,
      heartbeatSeconds: 1,
      ...options,
    });
    writeFileSync(join(this.dir, "spec.sh"), spec, { mode: 0o600 });
    return this.launch(shell, env);
  }

  /** Start the wrapper on whatever the job directory holds now (`env`: what a launcher adds to its environment). */
  launch(shell: ShellCase, env: Record<string, string> = {}): this {
    const log = openSync(join(this.dir, "wrapper.log"), "a", 0o600);
    try {
      // The embedded script, written out: tests run exactly what the binary ships.
      const wrapper = join(scratchDir(), "bin", "wrapper-test.sh");
      const proc = Bun.spawn([...shell.argv, wrapper, this.dir], {
        detached: true,
        stdin: "ignore",
        stdout: log,
        stderr: log,
        env: { ...shellEnv(shell), ...env },
      });
      this.wrapperPid = proc.pid;
    } catch (error) {
      // Not yet bound by `await using`: clean up here.
      rmSync(this.root, { recursive: true, force: true });
      throw error;
    } finally {
      closeSync(log);
    }
    return this;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  read(name: string): string {
    return readFileSync(this.path(name), "utf8");
  }

  /** The file's text, or "" when it is not there. */
  readOr(name: string): string {
    try {
      return this.read(name);
    } catch {
      return "";
    }
  }

  bytes(name: string): Uint8Array {
    return new Uint8Array(readFileSync(this.path(name)));
  }

  async exit(timeoutMs = 15_000): Promise<ExitRecord> {
    try {
      return await waitFor("the exit record", () => readExitRecord(this.dir) ?? undefined, timeoutMs);
    } catch (error) {
      let log = "";
      try {
        log = this.read("wrapper.log");
      } catch {}
      throw new Error(`${(error as Error).message}; wrapper.log:\n${log}\n${this.snapshot()}`);
    }
  }

  /** What a stuck job looks like: its files with their sizes, its heartbeat, and the state of each of its processes. */
  snapshot(): string {
    const files = (() => {
      try {
        return readdirSync(this.dir)
          .map((f) => `${f} ${statSync(join(this.dir, f)).size}`)
          .join(", ");
      } catch (e) {
        return String(e);
      }
    })();
    const started = readStarted(this.dir);
    const ids = [this.wrapperPid, started?.pgid].filter((n): n is number => typeof n === "number" && n > 1);
    const procs: string[] = [];
    for (const entry of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (ids.includes(Number(pgrp))) procs.push(`${entry} ${name} ${state} ppid=${ppid} pgrp=${pgrp}`);
      } catch {
        // gone meanwhile
      }
    }
    return `files: ${files}\nheartbeat: ${this.readOr("heartbeat").replaceAll("\n", " ")}\nprocesses:\n${procs.join("\n")}`;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    const started = readStarted(this.dir);
    if (started?.pgid) killQuietly(-started.pgid);
    if (started) killQuietly(started.pid);
    for (const pid of this.extraPids) killQuietly(pid);
    // The wrapper leads its own group (detached): this also stops its monitor and the monitor's sleep.
    if (this.wrapperPid) killQuietly(-this.wrapperPid);
    // the cgroups of a job that kept processes, or whose wrapper a test killed, go once empty
    for (const cg of /^cgroups=(.*)$/m.exec(this.readOr("started"))?.[1]?.split(" ") ?? [])
      if (cg) await dropCgroup(cg);
    rmSync(this.root, { recursive: true, force: true });
  }
}

export function newJob(): Job {
  return new Job();
}

/** Removes a job's cgroup directory once its processes are gone (rmdir fails while any is left); bounded. */
async function dropCgroup(dir: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    }
    await Bun.sleep(100);
  }
}
