// Held calls: progress notifications at a steady cadence while a call waits, and the per-client hold budget.
import type { JobStatus, ProgressFn } from "../core/model/service-api.ts";
import { formatSeconds } from "./results.ts";

export type ProgressToken = string | number;

/** What a held call needs from its request: who to tell, how often, when to stop. */
export interface HoldContext {
  progressToken: ProgressToken | undefined;
  notify: (notification: { method: string; params: Record<string, unknown> }) => Promise<void>;
  signal: AbortSignal;
  budgetMs: number;
  progressIntervalMs: number;
}

export interface HoldHooks {
  signal: AbortSignal;
  onProgress: ProgressFn;
  progressIntervalMs: number;
}

/** Sends `notifications/progress` on the request's token (none without one), numbered, until stopped. */
function progressSender(ctx: HoldContext) {
  const token = ctx.progressToken;
  let sent = 0;
  let stopped = false;
  return {
    active: token !== undefined,
    send(message: string): void {
      if (stopped || token === undefined) return;
      sent += 1;
      ctx
        .notify({
          method: "notifications/progress",
          params: { progressToken: token, progress: sent, message },
        })
        .catch(() => {});
    },
    stop(): void {
      stopped = true;
    },
  };
}

/**
 * Runs a held wait for one job: core's wait reports progress once per interval, a sentence from the look it
 * takes anyway, and each one goes out as it comes. No timer of our own and no look of our own.
 */
export async function holdWithProgress<T>(
  ctx: HoldContext,
  work: (hooks: HoldHooks) => Promise<T>,
): Promise<T> {
  const progress = progressSender(ctx);
  try {
    return await work({
      signal: ctx.signal,
      onProgress: progress.send,
      progressIntervalMs: ctx.progressIntervalMs,
    });
  } finally {
    progress.stop();
  }
}

/**
 * Runs a held call whose service reports no steady progress of its own (completions report none; an array's
 * wait only while one task's wait lasts a whole interval): one notification per interval, never more, with the
 * latest sentence the call reported since the last one, else `describe()`.
 */
export async function holdWithTicker<T>(
  ctx: HoldContext,
  describe: () => Promise<string>,
  work: (hooks: HoldHooks) => Promise<T>,
): Promise<T> {
  const progress = progressSender(ctx);
  let latest: string | undefined;
  let ticks = 0;
  let describing = false;
  const onProgress: ProgressFn = (message) => {
    latest = message;
  };
  // Exactly one notification per tick: a describe() still running when the next tick fires is dropped.
  const tick = () => {
    const mine = ++ticks;
    if (latest !== undefined || describing) {
      progress.send(latest ?? "still waiting");
      latest = undefined;
      return;
    }
    describing = true;
    describe()
      .catch(() => "still waiting")
      .then((message) => {
        describing = false;
        if (mine === ticks) progress.send(message);
      });
  };
  const timer = progress.active ? setInterval(tick, ctx.progressIntervalMs) : undefined;
  try {
    return await work({ signal: ctx.signal, onProgress, progressIntervalMs: ctx.progressIntervalMs });
  } finally {
    progress.stop();
    if (timer !== undefined) clearInterval(timer);
  }
}

/** "running 3m12s, last output 2s ago" — the sentence progress and task status messages use. */
export function statusSentence(status: JobStatus, nowMs: number = Date.now()): string {
  const parts = [
    status.elapsed_seconds === undefined
      ? `${status.state}, never started`
      : `${status.state} ${formatSeconds(status.elapsed_seconds)}`,
  ];
  if (status.last_output_at !== null) {
    const agoSeconds = Math.max(0, (nowMs - Date.parse(status.last_output_at)) / 1000);
    parts.push(`last output ${formatSeconds(agoSeconds)} ago`);
  } else if (status.state === "running" || status.state === "stalled") {
    parts.push("no output yet");
  }
  if (status.status_message) parts.push(status.status_message);
  return parts.join(", ");
}

/** Seconds requested by the caller, capped by the hold budget; in ms. */
export function holdTimeoutMs(requestedSeconds: number | undefined, budgetMs: number): number {
  if (requestedSeconds === undefined) return budgetMs;
  return Math.min(budgetMs, Math.round(requestedSeconds * 1000));
}
