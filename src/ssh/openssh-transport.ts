// SshTransport over the system OpenSSH client: every operation is an `ssh` process multiplexed through one
// ControlMaster socket (opened once, by the user in a terminal or by us in BatchMode), so hosts that need
// Kerberos, certificates, FIDO keys or 2FA work with the same job protocol as the built-in client.
import type { Subprocess } from "bun";
import {
  ensureMaster,
  missingClient,
  muxArgs,
  type OpensshResolved,
  type OpensshTarget,
  opensshError,
  resolveOpenssh,
  SSH_BINARY,
} from "./openssh-command.ts";
import { CloseSignal, type ExecResult, type SshTransport, type StreamHandle } from "./ssh-transport.ts";

/** Exit status of `ssh` itself failing (connection, mux, authentication), as opposed to the remote command's. */
const SSH_FAILURE = 255;

// Upload: the data arrives on stdin; a temp file next to the target is renamed over it.
// A fresh temp name made with noclobber (O_EXCL: a planted symlink is refused), renamed over a target that is no symlink.
const UPLOAD = `umask 077; t="$1.tmp-$$"; rm -f "$t"; set -C; cat >"$t" && chmod "$2" "$t" && [ ! -h "$1" ] && [ ! -d "$1" ] && mv -f "$t" "$1" || { rm -f "$t"; exit 1; }`;

function quote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

export class OpensshTransport implements SshTransport {
  readonly kind = "openssh" as const;
  private readonly closing = new CloseSignal();
  private readonly children = new Set<Subprocess>();

  private constructor(
    readonly target: OpensshTarget,
    readonly resolved: OpensshResolved,
  ) {}

  /** Resolves the host with `ssh -G`, then reuses or opens the ControlMaster. */
  static async connect(target: OpensshTarget): Promise<OpensshTransport> {
    const resolved = await resolveOpenssh(target);
    await ensureMaster(target, resolved);
    return new OpensshTransport(target, resolved);
  }

  get isOpen(): boolean {
    return !this.closing.closed;
  }

  onClose(listener: () => void): () => void {
    return this.closing.onClose(listener);
  }

  private markClosed(): void {
    this.closing.close();
  }

  /** Stops our in-flight `ssh` processes (by PID). The master stays: it is shared, and ControlPersist ends it. */
  destroy(): void {
    for (const c of this.children) c.kill("SIGKILL");
    this.children.clear();
    this.markClosed();
  }

  private spawn(command: string): Subprocess<"pipe", "pipe", "pipe"> {
    if (this.closing.closed) {
      throw opensshError(
        this.target.label,
        `the connection to ${this.target.label} is closed`,
        "retry: a new connection is made",
      );
    }
    const argv = [
      SSH_BINARY,
      ...muxArgs(this.target, this.resolved),
      "-o",
      "ControlMaster=no",
      "-o",
      "BatchMode=yes",
      "-T",
      "-x",
      "--",
      this.target.destination,
      command,
    ];
    let proc: Subprocess<"pipe", "pipe", "pipe">;
    try {
      proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    } catch (e) {
      throw missingClient(this.target.label, e);
    }
    this.children.add(proc);
    void proc.exited.then(() => this.children.delete(proc));
    return proc;
  }

  // ssh's own failure (255) means the master or the network is gone: the next operation reconnects.
  private sshFailed(stderr: string, during: string): never {
    this.markClosed();
    throw opensshError(
      this.target.label,
      `the OpenSSH connection to ${this.target.label} failed during ${during}: ${stderr.trim().split("\n").slice(-2).join("; ") || "ssh exited with 255"}`,
      "retry: a new connection is made (check `ssh HOST true` in a terminal if it persists)",
    );
  }

  async exec(command: string, stdin: string | Buffer, timeoutMs: number): Promise<ExecResult> {
    const proc = this.spawn(command);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, timeoutMs);
    try {
      proc.stdin.write(stdin);
      await proc.stdin.end();
    } catch {
      // ssh exited before reading everything; its status says why
    }
    const [stdout, stderr] = await Promise.all([
      new Response(proc.stdout).arrayBuffer(),
      new Response(proc.stderr).arrayBuffer(),
    ]);
    const code = await proc.exited;
    clearTimeout(timer);
    if (timedOut) {
      this.destroy();
      throw opensshError(
        this.target.label,
        `${this.target.label} did not answer within ${Math.round(timeoutMs / 1000)}s`,
        "the host or network may be overloaded or down; retry later (operation_timeout in [hosts.NAME] raises the limit)",
      );
    }
    const errText = Buffer.from(stderr);
    if (code === SSH_FAILURE) this.sshFailed(errText.toString(), "a command");
    if (this.closing.closed) {
      throw opensshError(
        this.target.label,
        `the connection to ${this.target.label} was closed during a command`,
        "retry: a new connection is made",
      );
    }
    const sig = proc.signalCode;
    return {
      code: sig ? null : code,
      signal: sig ? String(sig).replace(/^SIG/, "") : null,
      stdout: Buffer.from(stdout),
      stderr: errText,
    };
  }

  async stream(
    command: string,
    stdin: string,
    onData: (chunk: Buffer) => void,
    onEnd: () => void,
  ): Promise<StreamHandle> {
    const proc = this.spawn(command);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      off();
      onEnd();
    };
    const off = this.onClose(end);
    proc.stdin.write(stdin);
    void proc.stdin.end();
    void new Response(proc.stderr).arrayBuffer();
    void (async () => {
      try {
        for await (const chunk of proc.stdout) onData(Buffer.from(chunk));
      } catch {
        // the process was killed
      }
      const code = await proc.exited;
      if (code === SSH_FAILURE && !ended) this.markClosed();
      end();
    })();
    return {
      close: () => {
        proc.kill("SIGTERM");
        end();
      },
    };
  }

  async writeFileAtomic(path: string, data: string | Buffer, mode: number): Promise<void> {
    const command = `sh -c ${quote(UPLOAD)} sh ${quote(path)} ${mode.toString(8)}`;
    const r = await this.exec(command, data, this.target.operationTimeoutMs);
    if (r.code !== 0) {
      throw opensshError(
        this.target.label,
        `could not write ${path} on ${this.target.label}: ${r.stderr.toString().trim() || `exit ${r.code}`}`,
        "check free space and permissions of remote_job_dir on the host",
        { wrapper_stage: "upload", remote_stderr: r.stderr.toString().slice(0, 2000) },
      );
    }
  }
}
