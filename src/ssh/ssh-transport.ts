// What the rest of the SSH backend needs from a connection to one host, whichever client provides it: the
// built-in ssh2 session (ssh-session.ts) or the system OpenSSH client over a ControlMaster socket (openssh-transport.ts).

export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
}

export interface StreamHandle {
  close(): void;
}

export interface SshTransport {
  /** "ssh2" or "openssh" (doctor, messages). */
  readonly kind: "ssh2" | "openssh";
  readonly isOpen: boolean;
  /** Runs `listener` when the connection closes (at once if it is closed); returns a function that unregisters it. */
  onClose(listener: () => void): () => void;
  /** Closes at once; in-flight operations fail with connection_failed. */
  destroy(): void;
  /** Runs `command` (through the login shell) with `stdin`, collecting both streams; a timeout is a connection failure. */
  exec(command: string, stdin: string | Buffer, timeoutMs: number): Promise<ExecResult>;
  /** A long-lived command: `onData` gets stdout chunks, `onEnd` runs once when it or the connection ends. */
  stream(
    command: string,
    stdin: string,
    onData: (chunk: Buffer) => void,
    onEnd: () => void,
  ): Promise<StreamHandle>;
  /** Writes a file so that readers see the old content or the whole new one (temp file, then rename). */
  writeFileAtomic(path: string, data: string | Buffer, mode: number): Promise<void>;
}

/** The closed flag and close listeners every transport keeps: `close()` fires each listener once. */
export class CloseSignal {
  private closedFlag = false;
  private readonly listeners = new Set<() => void>();

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Runs `listener` when closed (at once if already closed); returns a function that unregisters it. */
  onClose(listener: () => void): () => void {
    if (this.closedFlag) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Marks closed and runs the listeners; false when it was already closed. */
  close(): boolean {
    if (this.closedFlag) return false;
    this.closedFlag = true;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const l of listeners) l();
    return true;
  }
}
