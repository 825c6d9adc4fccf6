// The MCP server's stdin, stdout and stderr through the runtime's own file streams. Node's process.stdin,
// process.stdout and process.stderr cost a compiled binary about 15 ms of CPU at the first use of any of them (they
// load Node's stream classes and set up a tty or pipe wrapper): most of what a server start spent outside the SDK.
// What the SDK's stdio transport needs of them is small: `data`/`end` events from the input, and from the output
// `write` (false: wait for `drain`) and `error`.
import { EventEmitter } from "node:events";

/**
 * Reads fd 0 (Bun.stdin) until it ends: each chunk to `onChunk`, then `onEnd` once (the end of input, or a read
 * error). Returns `stop`, which ends the reading without calling `onEnd` (the transport closed first).
 */
export function readStdin(onChunk: (chunk: Buffer) => void, onEnd: () => void): () => void {
  let stopped = false;
  const reader = Bun.stdin.stream().getReader();
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || stopped) break;
        if (value.byteLength > 0) onChunk(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    } catch {
      // a read error ends the input as its end does
    }
    if (!stopped) onEnd();
  })();
  return () => {
    if (stopped) return;
    stopped = true;
    reader.cancel().catch(() => {});
  };
}

/**
 * fd 1 (Bun.stdout's sink; fd 2 for diagnostics) as the SDK's transport writes to it: `write` answers true when the
 * bytes went out at once, false when they are queued (a slow reader: `drain` follows once they went out); a failed
 * write (EPIPE: the client went away; ENOSPC behind `> file`) emits `error` once, and every later write fails the
 * same way.
 */
export class OutputSink extends EventEmitter {
  private readonly sink: Bun.FileSink;
  private failure: Error | null = null;
  private queued: Promise<unknown> = Promise.resolve();

  constructor(file: Bun.BunFile = Bun.stdout) {
    super();
    // each send waiting for `drain` listens once for it and for `error`: many at a time is no leak
    this.setMaxListeners(0);
    this.sink = file.writer();
  }

  write(data: string | Uint8Array): boolean {
    if (this.failure) {
      const failure = this.failure;
      queueMicrotask(() => this.report(failure));
      return false;
    }
    let pending: Promise<unknown>[] = [];
    try {
      const wrote = this.sink.write(data);
      if (typeof wrote !== "number") pending.push(wrote);
      const flushed = this.sink.flush();
      if (typeof flushed !== "number") pending.push(flushed);
    } catch (e) {
      pending = [Promise.reject(e)];
    }
    if (pending.length === 0) return true;
    this.queued = Promise.all([this.queued, ...pending]).then(
      () => {
        if (!this.failure) this.emit("drain");
      },
      (e) => this.fail(e),
    );
    return false;
  }

  /** Resolves once everything written so far went out (or failed): the server's last answers before it exits. */
  async finish(): Promise<void> {
    await this.queued;
    if (this.failure) return;
    try {
      await this.sink.end();
    } catch {
      // the reader is gone: nothing more can reach it
    }
  }

  private fail(e: unknown): void {
    if (this.failure) return;
    this.failure = e instanceof Error ? e : new Error(String(e));
    this.report(this.failure);
  }

  /** `error` to whoever listens (an EventEmitter throws an `error` nobody listens to). */
  private report(failure: Error): void {
    if (this.listenerCount("error") > 0) this.emit("error", failure);
  }
}

let diagnostics: OutputSink | undefined;

/**
 * A line for whoever reads the server's stderr (a client's log), "awaitless mcp: " first. Asynchronous: a client
 * that never reads stderr cannot stall the protocol.
 */
export function diagnose(line: string): void {
  diagnostics ??= new OutputSink(Bun.stderr);
  diagnostics.write(`awaitless mcp: ${line}\n`);
}

/** Resolves once the diagnostics written so far went out, or after `ms` (a slow reader never holds the exit). */
export function finishDiagnostics(ms: number): Promise<unknown> | undefined {
  return diagnostics && Promise.race([diagnostics.finish(), Bun.sleep(ms)]);
}
