// The only importer of ssh2: one authenticated, host-key-verified connection with a promise API (exec, long-lived
// streams, atomic SFTP writes), keepalive, a channel semaphore, optional one-hop ProxyJump, and hard close.
import type {
  AnyAuthMethod,
  BaseAgent,
  Client,
  ClientChannel,
  ConnectConfig,
  IdentityCallback,
  ParsedKey,
  SFTPWrapper,
} from "ssh2";
import { AwaitlessError } from "../core/model/errors.ts";
import { type AuthPlan, allowedAgentKeys, authFailure, type ParsedKeyResult, planAuth } from "./ssh-auth.ts";
import { decideHostKey, type HostKeyPolicy, hostKeyAlgorithms } from "./ssh-host-key.ts";
import { STARTUP_ATTEMPTS, StartupRefused, startupBackoffMs, startupRefusal } from "./ssh-startup.ts";
import { CloseSignal, type ExecResult, type SshTransport, type StreamHandle } from "./ssh-transport.ts";

export interface SessionTarget {
  /** The name the user gave (messages). */
  label: string;
  host: string;
  port: number;
  user: string;
  identityFiles: string[];
  agentSocket: string | null;
  /** IdentitiesOnly yes: the agent offers only the keys of identityFiles. Default false. */
  identitiesOnly?: boolean;
  hostKey: HostKeyPolicy;
  connectTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  jump?: SessionTarget;
}

export type { ExecResult, StreamHandle } from "./ssh-transport.ts";

type Ssh2 = typeof import("ssh2");
let ssh2: Ssh2 | null = null;
// Loaded on first use so commands that never touch SSH do not pay for parsing ssh2.
async function loadSsh2(): Promise<Ssh2> {
  ssh2 ??= await import("ssh2");
  return ssh2;
}

function parseKeyWith(lib: Ssh2): (data: Buffer) => ParsedKeyResult {
  return (data) => {
    const r = lib.utils.parseKey(data);
    if (r instanceof Error) {
      return /encrypted|passphrase/i.test(r.message)
        ? { kind: "encrypted" }
        : { kind: "invalid", message: r.message };
    }
    const key = Array.isArray(r) ? r[0] : r;
    return { kind: "ok", key, publicKey: key?.getPublicSSH() };
  };
}

/** The agent at `socket`, listing only the keys whose public blob is in `allowed` (IdentitiesOnly yes); signing is its own. */
function agentLimitedTo(lib: Ssh2, socket: string, allowed: Buffer[]): BaseAgent {
  const publicBlob = (k: unknown): Buffer | null => {
    const parsed = lib.utils.parseKey(k as ParsedKey);
    return parsed instanceof Error ? null : parsed.getPublicSSH();
  };
  return new (class extends lib.OpenSSHAgent {
    override getIdentities(cb: IdentityCallback<ParsedKey>): void {
      super.getIdentities((err, keys) =>
        err ? cb(err) : cb(undefined, allowedAgentKeys(keys ?? [], publicBlob, allowed)),
      );
    }
  })(socket);
}

export function connectionError(
  target: SessionTarget,
  message: string,
  hint: string,
  extra: Record<string, unknown> = {},
): AwaitlessError {
  return new AwaitlessError("connection_failed", message, hint, { host: target.label, ...extra });
}

/** Bounded concurrency for channels: sshd's MaxSessions (default 10) also counts the SFTP and watch channels. */
class Semaphore {
  private queue: (() => void)[] = [];
  constructor(private free: number) {}
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.free++;
    };
  }
}

// Sessions still open: when the process exits they say goodbye (SSH_MSG_DISCONNECT, then FIN), so the host logs a
// client that disconnected rather than a connection that was lost. end() only queues bytes; exit never waits.
const openSessions = new Set<Client>();
let goodbyeOnExit = false;
function sayGoodbyeOnExit(client: Client): void {
  openSessions.add(client);
  if (goodbyeOnExit) return;
  goodbyeOnExit = true;
  process.once("exit", () => {
    for (const c of openSessions) {
      try {
        c.end();
      } catch {
        // already closed
      }
    }
  });
}

export class SshSession implements SshTransport {
  readonly kind = "ssh2" as const;
  private sftpP: Promise<SFTPWrapper> | null = null;
  private readonly channels = new Semaphore(6);
  private readonly closing = new CloseSignal();

  private constructor(
    readonly target: SessionTarget,
    private readonly client: Client,
    private readonly jump: SshSession | null,
  ) {
    client.on("close", () => this.markClosed());
    client.on("error", () => this.markClosed());
    sayGoodbyeOnExit(client);
  }

  static async connect(target: SessionTarget): Promise<SshSession> {
    const lib = await loadSsh2();
    const jump = target.jump ? await SshSession.connect(target.jump) : null;
    try {
      const plan = planAuth(
        target.identityFiles,
        target.agentSocket,
        parseKeyWith(lib),
        target.identitiesOnly ?? false,
      );
      const client = await handshakeRetryingDrops(target, async () =>
        handshake(lib, target, plan, jump ? await jump.forward(target.host, target.port) : undefined),
      );
      return new SshSession(target, client, jump);
    } catch (e) {
      jump?.destroy();
      throw e;
    }
  }

  get isOpen(): boolean {
    return !this.closing.closed;
  }

  /** Runs `listener` when the connection closes (at once if it is closed); returns a function that unregisters it. */
  onClose(listener: () => void): () => void {
    return this.closing.onClose(listener);
  }

  private markClosed(): void {
    openSessions.delete(this.client);
    if (this.closing.close()) this.jump?.destroy();
  }

  /** Closes at once, even when the peer is frozen (end() would wait for its FIN forever). */
  destroy(): void {
    const sock = (this.client as unknown as { _sock?: { destroy(): void } })._sock;
    try {
      this.client.end();
    } catch {
      // already closed
    }
    sock?.destroy();
    this.markClosed();
  }

  private forward(host: string, port: number): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      this.client.forwardOut("127.0.0.1", 0, host, port, (err, stream) => {
        if (err) {
          reject(
            connectionError(
              this.target,
              `the jump host ${this.target.label} could not open a connection to ${host}:${port}: ${err.message}`,
              "check that the target is reachable from the jump host (ProxyJump in ~/.ssh/config)",
            ),
          );
        } else resolve(stream);
      });
    });
  }

  // Opens an exec channel, retrying "open failed" (sshd frees a session slot a little after a channel closes).
  private async openExec(command: string): Promise<ClientChannel> {
    for (let attempt = 1; ; attempt++) {
      if (this.closing.closed)
        throw connectionError(
          this.target,
          `the connection to ${this.target.label} is closed`,
          "retry: a new connection is made",
        );
      try {
        return await new Promise<ClientChannel>((resolve, reject) => {
          // A connection that dies while the open is pending never calls back: settle on close instead.
          const off = this.onClose(() => reject(new Error("the connection closed")));
          try {
            this.client.exec(command, (err, stream) => {
              off();
              if (err) reject(err);
              else resolve(stream);
            });
          } catch (e) {
            off();
            reject(e);
          }
        });
      } catch (e) {
        const msg = (e as Error).message;
        if (/open failed/i.test(msg) && attempt < 6) {
          await Bun.sleep(25 * attempt);
          continue;
        }
        throw connectionError(
          this.target,
          `could not run a command on ${this.target.label}: ${msg}`,
          "retry; if it persists, check the host's sshd (MaxSessions) and `ssh HOST true`",
        );
      }
    }
  }

  /** Runs `command` (through the login shell) with `stdin`, collecting both streams; a timeout destroys the connection. */
  async exec(command: string, stdin: string | Buffer, timeoutMs: number): Promise<ExecResult> {
    const release = await this.channels.acquire();
    try {
      const stream = await this.openExec(command);
      return await new Promise<ExecResult>((resolve, reject) => {
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        const timer = setTimeout(() => {
          this.destroy();
          reject(
            connectionError(
              this.target,
              `${this.target.label} did not answer within ${Math.round(timeoutMs / 1000)}s`,
              "the host or network may be overloaded or down; retry later (operation_timeout in [hosts.NAME] raises the limit)",
            ),
          );
        }, timeoutMs);
        stream.on("data", (d: Buffer) => out.push(d));
        stream.stderr.on("data", (d: Buffer) => err.push(d));
        const lost = () =>
          reject(
            connectionError(
              this.target,
              `the connection to ${this.target.label} was lost during a command`,
              "retry: a new connection is made",
            ),
          );
        const off = this.onClose(() => {
          clearTimeout(timer);
          lost();
        });
        // The status comes from "close", not "exit": ssh2 records it when it arrives and passes it to "close" as
        // (code), (null, "SIGNAME", …), or nothing when the server sent none. "exit" fires while ssh2 parses the
        // packet, so when the exec reply, the output and the status arrive in one read (a busy client), it fired
        // before this code, resumed after the await above, could listen, and the status was lost.
        stream.on("close", (c?: number | null, s?: string) => {
          clearTimeout(timer);
          off();
          const code = typeof c === "number" ? c : null;
          const signal = typeof s === "string" ? s.replace(/^SIG/, "") : null;
          if (code === null && signal === null && this.closing.closed) {
            reject(
              connectionError(
                this.target,
                `the connection to ${this.target.label} was lost during a command`,
                "retry: a new connection is made",
              ),
            );
          } else resolve({ code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
        });
        stream.end(stdin);
      });
    } finally {
      release();
    }
  }

  /** A long-lived command: `onData` gets stdout chunks, `onEnd` runs once when the channel or connection closes. */
  async stream(
    command: string,
    stdin: string,
    onData: (chunk: Buffer) => void,
    onEnd: () => void,
  ): Promise<StreamHandle> {
    const stream = await this.openExec(command);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      onEnd();
    };
    stream.on("data", onData);
    stream.stderr.resume();
    stream.on("close", end);
    this.onClose(end);
    stream.end(stdin);
    return {
      close: () => {
        try {
          stream.close();
        } catch {
          // already closed
        }
        end();
      },
    };
  }

  private sftp(): Promise<SFTPWrapper> {
    this.sftpP ??= new Promise<SFTPWrapper>((resolve, reject) => {
      this.client.sftp((err, sftp) => (err ? reject(err) : resolve(sftp)));
    }).catch((e) => {
      this.sftpP = null;
      throw connectionError(
        this.target,
        `could not open SFTP on ${this.target.label}: ${(e as Error).message}`,
        "enable the sftp subsystem in the host's sshd_config (Subsystem sftp internal-sftp)",
      );
    });
    return this.sftpP;
  }

  /** Writes a file atomically over SFTP: an exclusive temp file, fsync, then posix-rename over the target. */
  async writeFileAtomic(path: string, data: string | Buffer, mode: number): Promise<void> {
    const sftp = await this.sftp();
    const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const call = <T>(f: (cb: (err: Error | null | undefined, v: T) => void) => void) =>
      new Promise<T>((resolve, reject) => f((err, v) => (err ? reject(err) : resolve(v))));
    try {
      const handle = await call<Buffer>((cb) => sftp.open(tmp, "wx", { mode }, cb));
      const buf = Buffer.from(data);
      for (let off = 0; off < buf.length; off += 32_768) {
        const n = Math.min(32_768, buf.length - off);
        await call<void>((cb) => sftp.write(handle, buf, off, n, off, (e) => cb(e, undefined)));
      }
      await call<unknown>((cb) => sftp.ext_openssh_fsync(handle, cb)).catch(() => undefined);
      await call<void>((cb) => sftp.close(handle, (e) => cb(e, undefined)));
      await call<void>((cb) => sftp.ext_openssh_rename(tmp, path, (e) => cb(e, undefined)));
    } catch (e) {
      sftp.unlink(tmp, () => undefined);
      if (e instanceof AwaitlessError) throw e;
      throw connectionError(
        this.target,
        `could not write ${path} on ${this.target.label} over SFTP: ${(e as Error).message}`,
        "check free space and permissions of remote_job_dir on the host",
        { wrapper_stage: "upload" },
      );
    }
  }
}

// sshd drops connections past MaxStartups (and, from 9.8, from penalized addresses) before its identification line:
// such a drop is retried with jittered backoff; any other failure, and the last drop, is the caller's error.
async function handshakeRetryingDrops(
  target: SessionTarget,
  attempt: () => Promise<Client>,
): Promise<Client> {
  const started = Date.now();
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof StartupRefused)) throw e;
      if (n >= STARTUP_ATTEMPTS) {
        const where = `${target.user}@${target.host}:${target.port}`;
        const r = startupRefusal(target.label, where, n, Date.now() - started, e.message);
        throw connectionError(target, r.message, r.hint, { sshd_limit: true });
      }
      await Bun.sleep(startupBackoffMs(n));
    }
  }
}

function handshake(
  lib: Ssh2,
  target: SessionTarget,
  plan: AuthPlan,
  sock: ClientChannel | undefined,
): Promise<Client> {
  const client = new lib.Client();
  client.on("error", () => undefined); // later errors surface through "close"; an unheard error would throw
  let refusal: { message: string; hint: string } | undefined;
  let hostKeySeen = false;
  const agent = plan.agentSocket
    ? plan.agentKeys
      ? agentLimitedTo(lib, plan.agentSocket, plan.agentKeys)
      : plan.agentSocket
    : null;
  const methods: AnyAuthMethod[] = [
    ...(agent ? [{ type: "agent" as const, username: target.user, agent }] : []),
    ...plan.keys.map((k) => ({ type: "publickey" as const, username: target.user, key: k.key as Buffer })),
  ];
  const config: ConnectConfig = {
    host: target.host,
    port: target.port,
    username: target.user,
    readyTimeout: target.connectTimeoutMs,
    keepaliveInterval: target.keepaliveIntervalMs,
    keepaliveCountMax: target.keepaliveCountMax,
    // With nothing to offer, still connect (reachability and the host key are checked first) and try "none".
    authHandler: methods.length > 0 ? methods : [{ type: "none", username: target.user }],
    algorithms: { serverHostKey: hostKeyAlgorithms(target.hostKey) as never },
    hostVerifier: (blob: Buffer) => {
      hostKeySeen = true;
      const d = decideHostKey(target.hostKey, blob);
      refusal = d.refusal;
      return d.accept;
    },
    ...(sock ? { sock } : {}),
  };
  // Set once the TCP connection is up, and once the server's identification line arrived (ssh2's "greeting" and
  // "handshake" come later; its parser sees the identification first, then the key exchange calls hostVerifier).
  let tcpUp = false;
  let serverSpoke = false;
  client.once("connect", () => {
    tcpUp = true;
  });
  client.once("handshake", () => {
    serverSpoke = true;
  });
  return new Promise((resolve, reject) => {
    const onError = (e: Error & { level?: string; code?: string }) => {
      client.removeListener("ready", onReady);
      client.removeListener("close", onClose);
      const where = `${target.user}@${target.host}:${target.port}`;
      if (refusal) return reject(connectionError(target, refusal.message, refusal.hint));
      if (tcpUp && !serverSpoke && !hostKeySeen && droppedAtStartup(e))
        return reject(new StartupRefused(e.message));
      // sshd ends the connection once MaxAuthTries keys were rejected: an authentication failure too.
      const tooManyFailures = /too many authentication failures/i.test(e.message);
      if (e.level === "client-authentication" || tooManyFailures) {
        const f = authFailure(target.user, target.label, plan, { tooManyFailures });
        return reject(connectionError(target, f.message, f.hint));
      }
      const timedOut = e.level === "client-timeout" || /timed out/i.test(e.message);
      reject(
        connectionError(
          target,
          `cannot connect to ${target.label} (${where}): ${timedOut ? `no answer within ${Math.round(target.connectTimeoutMs / 1000)}s` : e.message}`,
          "check that the host is up and that `ssh " +
            target.label +
            " true` works; connect_timeout in [hosts.NAME] or ConnectTimeout in ~/.ssh/config sets the limit",
        ),
      );
    };
    // A peer that closes during the handshake may emit only "close": settle then too.
    const onClose = () => onError(new Error("the server closed the connection during the handshake"));
    const onReady = () => {
      client.removeListener("error", onError);
      client.removeListener("close", onClose);
      client.on("error", () => undefined);
      (client as unknown as { setNoDelay?: (v: boolean) => void }).setNoDelay?.(true);
      resolve(client);
    };
    client.once("ready", onReady);
    client.once("error", onError);
    client.once("close", onClose);
    try {
      client.connect(config);
    } catch (e) {
      onError(e as Error);
    }
  });
}

/** A close or reset while waiting for the server's identification: what sshd's MaxStartups and penalties look like. */
function droppedAtStartup(e: Error & { code?: string }): boolean {
  return (
    e.code === "ECONNRESET" ||
    e.code === "EPIPE" ||
    /connection lost before handshake|closed the connection during the handshake|ECONNRESET|EPIPE/i.test(
      e.message,
    )
  );
}
