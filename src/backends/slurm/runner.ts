// Owns how the Slurm backend reaches a login node: the CommandRunner interface and LocalRunner (this machine is the
// login node); the job directories' logs, artifacts and removal go through the login side's JobHost (`files`).
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readSync } from "node:fs";
import { homedir } from "node:os";
import { AwaitlessError } from "../../core/model/errors.ts";
import { replaceFile } from "../../wrapper/safe-files.ts";
import type { JobFiles } from "../host/job-host.ts";
import { LocalHost } from "../local/local-host.ts";
import type { SshHost } from "../ssh/ssh-host.ts";

export interface RunResult {
  /** The command's exit status (null when it died of a signal). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  stdin?: string;
  timeoutMs: number;
}

/**
 * What the Slurm backend needs from a login node. `exec` runs one program (argv, no shell) and resolves with its
 * status; it rejects with `connection_failed` when the node cannot be reached or does not answer within timeoutMs —
 * the program may then have run or not (the caller must not assume either).
 */
export interface CommandRunner {
  /** The host name, for messages. */
  readonly label: string;
  /** True when the runner is this machine (relative paths resolve against this process's cwd). */
  readonly isLocal: boolean;
  exec(argv: readonly string[], opts: ExecOptions): Promise<RunResult>;
  /** The login user's home directory (absolute). */
  homeDir(): Promise<string>;
  mkdirp(path: string, mode: number): Promise<void>;
  /** Writes atomically (temp file, then rename), with `mode`. */
  writeFile(path: string, data: string, mode: number): Promise<void>;
  /** Up to maxBytes of a file, or null when it does not exist. */
  readFile(path: string, maxBytes: number): Promise<string | null>;
  /** The login side as a JobHost: log tails and scans, artifacts, removal of job directories. */
  readonly files: JobFiles;
  /** The SSH host the login node is reached through (its watch channel sees the job directories), if any. */
  readonly sshHost?: SshHost;
  close(): void;
}

export function runnerError(label: string, message: string, hint: string): AwaitlessError {
  return new AwaitlessError("connection_failed", message, hint, { host: label });
}

/** Runs Slurm's clients on this machine (the binary runs on the login node). */
export class LocalRunner implements CommandRunner {
  readonly isLocal = true;
  // only its reads and removal serve here, which need neither the data directory nor the shell of a launch
  readonly files: JobFiles = new LocalHost({ dataDir: "", shell: "sh" });
  constructor(readonly label = "localhost") {}

  exec(argv: readonly string[], opts: ExecOptions): Promise<RunResult> {
    const [cmd, ...args] = argv;
    if (cmd === undefined) return Promise.reject(new Error("exec needs a program"));
    return new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let settled = false;
      const finish = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f();
      };
      const timer = setTimeout(() => {
        if (child.pid !== undefined) {
          try {
            process.kill(child.pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
        finish(() =>
          reject(
            runnerError(
              this.label,
              `${cmd} did not finish within ${Math.round(opts.timeoutMs / 1000)}s on ${this.label}`,
              "the Slurm controller may be overloaded; retry later",
            ),
          ),
        );
      }, opts.timeoutMs);
      child.stdout.on("data", (d: Buffer) => out.push(d));
      child.stderr.on("data", (d: Buffer) => err.push(d));
      child.on("error", (e) =>
        finish(() =>
          reject(
            runnerError(
              this.label,
              `could not run ${cmd} on ${this.label}: ${e.message}`,
              `check that the Slurm client tools (${cmd}) are installed and on PATH`,
            ),
          ),
        ),
      );
      child.on("close", (code) =>
        finish(() =>
          resolve({
            code,
            stdout: Buffer.concat(out).toString("utf8"),
            stderr: Buffer.concat(err).toString("utf8"),
          }),
        ),
      );
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.stdin ?? "");
    });
  }

  async homeDir(): Promise<string> {
    return process.env.HOME || homedir();
  }

  async mkdirp(path: string, mode: number): Promise<void> {
    mkdirSync(path, { recursive: true, mode });
  }

  async writeFile(path: string, data: string, mode: number): Promise<void> {
    replaceFile(path, data, mode);
  }

  async readFile(path: string, maxBytes: number): Promise<string | null> {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    try {
      const buf = Buffer.alloc(Math.max(0, maxBytes));
      let n = 0;
      while (n < buf.length) {
        const got = readSync(fd, buf, n, buf.length - n, n);
        if (got === 0) break;
        n += got;
      }
      return buf.subarray(0, n).toString("utf8");
    } finally {
      closeSync(fd);
    }
  }

  close(): void {}
}
