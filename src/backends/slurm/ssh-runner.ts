// Owns reaching a Slurm login node over SSH: the CommandRunner interface on the SSH backend's shared connection,
// the job directories' files through the SSH backend's JobHost.
import { shellQuote } from "../../wrapper/protocol.ts";
import type { SshHost } from "../ssh/ssh-host.ts";
import { SshJobHost } from "../ssh/ssh-job-host.ts";
import { type CommandRunner, type ExecOptions, type RunResult, runnerError } from "./runner.ts";

// Prints 'y' and the first $2 bytes of $1, or 'n' when it does not exist.
const READ = `if [ -e "$1" ]; then printf y; head -c "$2" "$1"; else printf n; fi`;
const MKDIR = `mkdir -p -- "$1" && chmod "$2" -- "$1"`;

export class SshRunner implements CommandRunner {
  readonly isLocal = false;
  readonly files: SshJobHost;
  private home: string | null = null;

  constructor(readonly host: SshHost) {
    this.files = new SshJobHost(host);
  }

  get label(): string {
    return this.host.name;
  }

  get sshHost(): SshHost {
    return this.host;
  }

  /** Runs argv through the login shell, each word single-quoted; stdin carries the batch script for sbatch. */
  async exec(argv: readonly string[], opts: ExecOptions): Promise<RunResult> {
    const session = await this.host.session();
    const r = await session.exec(argv.map(shellQuote).join(" "), opts.stdin ?? "", opts.timeoutMs);
    return { code: r.code, stdout: r.stdout.toString("utf8"), stderr: r.stderr.toString("utf8") };
  }

  private async script(body: string, args: string[], what: string): Promise<string> {
    const r = await this.host.run(body, args);
    if (r.code !== 0) {
      throw runnerError(
        this.label,
        `${what} failed on ${this.label} (exit ${r.code}): ${r.stderr.toString().trim().slice(0, 300)}`,
        "check the path and its permissions on the login node",
      );
    }
    return r.stdout.toString("utf8");
  }

  async homeDir(): Promise<string> {
    this.home ??= await this.script('printf %s "$HOME"', [], "reading $HOME");
    return this.home;
  }

  async mkdirp(path: string, mode: number): Promise<void> {
    await this.script(MKDIR, [path, mode.toString(8)], `creating ${path}`);
  }

  async writeFile(path: string, data: string, mode: number): Promise<void> {
    const session = await this.host.session();
    await session.writeFileAtomic(path, data, mode);
  }

  async readFile(path: string, maxBytes: number): Promise<string | null> {
    const out = await this.script(READ, [path, String(Math.max(0, Math.floor(maxBytes)))], `reading ${path}`);
    return out.startsWith("y") ? out.slice(1) : null;
  }

  close(): void {
    this.files.close();
  }
}
