// Ctrl-C, SIGTERM and SIGHUP while run or wait holds: only the wait stops, the job runs on. The job's ID and the
// command that collects it are said on stderr at once (before anything that could hang); a second signal ends now.
import { EXIT } from "../core/model/errors.ts";
import { nodeOs } from "../core/util/node-os.ts";
import type { CliIo } from "./cli-io.ts";
import { invokedName } from "./invoked-as.ts";
import { paint, styleFor } from "./render.ts";

export const DETACH_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type DetachSignal = (typeof DETACH_SIGNALS)[number];

export interface Detacher {
  /** Aborted by the first signal. */
  readonly signal: AbortSignal;
  /** The signal that detached, once one came. */
  readonly by: DetachSignal | null;
  /** The job (or array) this wait is for: said at once if a signal already came, else when one comes. */
  know(jobId: string): void;
  dispose(): void;
}

const HOW: Record<DetachSignal, string> = {
  SIGINT: "Ctrl-C",
  SIGTERM: "SIGTERM",
  SIGHUP: "SIGHUP: the terminal closed",
};

/**
 * Takes over SIGINT, SIGTERM and SIGHUP until `dispose`. `clear` removes the live line before a message. `what` is
 * how the message names this client's part: "detached" (run) or "stopped waiting" (wait).
 */
export function detachOnSignals(io: CliIo, clear: () => void, what: string): Detacher {
  const ctl = new AbortController();
  let by: DetachSignal | null = null;
  let jobId: string | null = null;
  const style = styleFor(io.stderr, io.env);
  const say = () => {
    if (by === null || jobId === null) return;
    const wait = `${invokedName(io.env)} wait ${jobId}`;
    io.stderr.write(
      `${what} (${HOW[by]}): ${jobId} keeps running; wait for it: ${paint(style, "bold", wait)}\n`,
    );
  };
  const handlers = DETACH_SIGNALS.map((sig) => {
    const handler = () => {
      if (by !== null) {
        // A second signal: leave now. Once the ID was said the job is collectable (exit 4, as any detach);
        // before it, whether the job exists is unknown, so the exit says which signal ended us (128 + its number).
        process.exit(jobId === null ? 128 + signalNumber(sig) : EXIT.waitTimedOut);
      }
      by = sig;
      clear();
      // the terminal echoed ^C where the cursor was: the message replaces it
      if (io.stderr.isTTY) io.stderr.write("\r\x1b[K");
      ctl.abort();
      say();
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  return {
    signal: ctl.signal,
    get by() {
      return by;
    },
    know(id: string) {
      jobId = id;
      say();
    },
    dispose() {
      for (const [sig, handler] of handlers) process.off(sig, handler);
    },
  };
}

/**
 * Nothing on stdout after a signal: the detach message on stderr said it all to a person. With --json the pending
 * answer still goes to stdout, unless that is the terminal that closed (SIGHUP).
 */
export function quietAfter(by: DetachSignal | null, opts: { json?: boolean }, io: CliIo): boolean {
  if (by === null) return false;
  return !opts.json || (by === "SIGHUP" && Boolean(io.stdout.isTTY));
}

/** A signal's number (node:os is loaded only when a second signal needs it). */
function signalNumber(sig: NodeJS.Signals): number {
  return nodeOs().constants.signals[sig];
}
