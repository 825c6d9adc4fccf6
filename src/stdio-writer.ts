// Writes to stdout/stderr synchronously to the last byte (slow or non-blocking pipes included); a gone reader ends quietly.
import { writeSync } from "node:fs";

/** Exit status when the reader of stdout went away: 128 + SIGPIPE, what a shell reports for `git log | head -1`. */
export const EXIT_BROKEN_PIPE = 141;

export interface SyncWriter {
  readonly isTTY: boolean;
  write(text: string | Uint8Array): boolean;
}

/** Longest pause between two attempts while a non-blocking pipe is full (its reader is slow). */
const MAX_BACKOFF_MS = 16;

/**
 * Writes all of `data` to `fd`, looping over partial writes. A non-blocking pipe (Bun makes its own
 * streams non-blocking, and a parent may hand one over) answers EAGAIN while full: wait and retry.
 * Returns the error code that stopped it, or undefined when every byte went out.
 */
export function writeAllSync(fd: number, data: Uint8Array): string | undefined {
  let offset = 0;
  let backoff = 1;
  while (offset < data.length) {
    try {
      offset += writeSync(fd, data, offset, data.length - offset);
      backoff = 1;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "EIO";
      if (code === "EINTR") continue;
      if (code !== "EAGAIN" && code !== "EWOULDBLOCK") return code;
      Bun.sleepSync(backoff);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
    }
  }
  return undefined;
}

/**
 * isatty(3) through the runtime's native binding: importing node:tty would load Node's stream classes, a few
 * milliseconds of every command's start. node:tty answers where the binding is missing.
 */
export function isTerminal(fd: number): boolean {
  try {
    const binding = (
      process as unknown as { binding(name: string): { isTTY?: (fd: number) => boolean } }
    ).binding("tty_wrap");
    if (typeof binding.isTTY === "function") return binding.isTTY(fd);
  } catch {
    // no such binding in this runtime
  }
  return (require("node:tty") as typeof import("node:tty")).isatty(fd);
}

const bytes = (text: string | Uint8Array) => (typeof text === "string" ? Buffer.from(text) : text);

/** Standard error: best effort, since there is nowhere left to report its own failure; a closed one stays silent. */
export function stderrWriter(fd = 2): SyncWriter {
  let closed = false;
  return {
    isTTY: isTerminal(fd),
    write(text) {
      if (!closed && writeAllSync(fd, bytes(text)) !== undefined) closed = true;
      return !closed;
    },
  };
}

/**
 * Standard output: every byte reaches the reader before the write returns. When the reader is gone (EPIPE)
 * the process ends at once with EXIT_BROKEN_PIPE and no message, as a command killed by SIGPIPE does; any
 * other failure (a full disk behind `> file`) is said on stderr and ends the process with status 1.
 */
export function stdoutWriter(stderr: SyncWriter, fd = 1): SyncWriter {
  return {
    isTTY: isTerminal(fd),
    write(text) {
      const failed = writeAllSync(fd, bytes(text));
      if (failed === undefined) return true;
      if (failed === "EPIPE") process.exit(EXIT_BROKEN_PIPE);
      stderr.write(`awaitless: could not write the output (${failed}); it is incomplete\n`);
      process.exit(1);
    },
  };
}
