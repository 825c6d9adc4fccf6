// What run and wait print: the live line while they hold (TTY only), the answer (human or flat JSON), the exit status.
import type { Ctx } from "../context.ts";
import { EXIT } from "../core/model/errors.ts";
import type { JobState } from "../core/model/job.ts";
import { isDelivered, type WaitResponse, withNext } from "../core/model/service-api.ts";
import type { CliIo } from "./cli-io.ts";
import { invokedName } from "./invoked-as.ts";
import { type EarlierAttempt, renderWait, waitJson } from "./output.ts";
import { paint, type Style, styleFor } from "./render.ts";
import { shown } from "./terminal-safe.ts";

export type Opts = Record<string, unknown> & { json?: boolean; "--"?: string[] };

export function exitCodeFor(state: JobState): number {
  switch (state) {
    case "succeeded":
      return EXIT.ok;
    case "failed":
    case "timed_out":
      return EXIT.jobFailed;
    case "cancelled":
      return EXIT.cancelled;
    case "lost":
      return EXIT.lost;
    default:
      return EXIT.waitTimedOut;
  }
}

export function optsOf(args: unknown[]): Opts {
  return (args[args.length - 1] ?? {}) as Opts;
}

export function out(io: CliIo, text: string): void {
  io.stdout.write(text.endsWith("\n") ? text : text + "\n");
}

export interface LiveLine {
  onProgress?: (m: string) => void;
  /** Clears the line (before the answer, or before a detach message); it may be drawn again after. */
  done(): void;
}

/** A live "running 12s" line on stderr while a wait holds, only on a TTY. */
export function liveLine(io: CliIo, style: Style, json: boolean): LiveLine {
  if (json || !io.stderr.isTTY) return { done() {} };
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let i = 0;
  let last = "";
  return {
    onProgress(m: string) {
      last = m;
      io.stderr.write(`\r\x1b[K${paint(style, "cyan", frames[i++ % frames.length]!)} ${shown(m)}`);
    },
    done() {
      if (last) io.stderr.write("\r\x1b[K");
      last = "";
    },
  };
}

/** The live line's options for a wait: progress every 250 ms when there is a line to draw. */
export function progressOf(live: LiveLine): {
  onProgress?: (m: string) => void;
  progressIntervalMs?: number;
} {
  return live.onProgress ? { onProgress: live.onProgress, progressIntervalMs: 250 } : {};
}

/** A pending answer's next step as the CLI words it: the command that collects the result. */
function cliNext(w: WaitResponse): WaitResponse {
  if (isDelivered(w)) return w;
  const next_command = `awaitless wait ${w.job_id}`;
  const next_action = w.host_unreachable
    ? `The job's host cannot be reached now; the job keeps its state (${w.job_state}) and may still be running. Run \`${next_command}\` again once the host is reachable.`
    : `The job is still ${w.job_state}${w.next_attempt_at && w.status_message ? `, ${w.status_message}` : ""}: only this wait ended, the job was not killed or changed. Run \`${next_command}\` to collect the result.`;
  return withNext(w, { next_action, next_command });
}

/**
 * Prints a wait-like answer (flat JSON, or for people the result / what is known so far) and returns the exit
 * status. `quiet`: print nothing (a signal detached and said so on stderr already).
 */
export async function printWait(
  io: CliIo,
  opts: Opts,
  ctx: Ctx,
  answer: WaitResponse,
  quiet = false,
): Promise<number> {
  const style = styleFor(io.stdout, io.env);
  const w = cliNext(answer);
  if (quiet) {
    // said on stderr
  } else if (opts.json) {
    const raw = isDelivered(w) ? ctx.service.resultJson(w.job_id) : null;
    out(io, waitJson(w, raw));
  } else {
    // For people, the next command names the binary as they can run it (JSON keeps the canonical form).
    const me = invokedName(io.env);
    const next = w.next_command?.replace(/^awaitless /, `${me} `);
    const earlier = isDelivered(w) ? await earlierAttempts(ctx, w) : [];
    out(io, renderWait(next === undefined ? w : { ...w, next_command: next }, style, earlier));
  }
  if (w.wait_state === "complete") return exitCodeFor(w.job_state);
  return w.host_unreachable ? EXIT.connection : EXIT.waitTimedOut;
}

/** A retried job's earlier attempts (how each ended, how long it ran), for the result's attempts line. */
export async function earlierAttempts(
  ctx: Ctx,
  r: { job_id: string; attempt?: number },
): Promise<EarlierAttempt[]> {
  if (r.attempt === undefined || r.attempt < 2) return [];
  const history = (await ctx.service.inspect(r.job_id)).attempt_history ?? [];
  return history.map((a) => ({
    attempt: a.attempt,
    state: a.state,
    exit_code: a.exit_code,
    started_at: a.started_at,
    finished_at: a.finished_at,
  }));
}
