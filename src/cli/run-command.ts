// `awaitless run`: like running the command, durably. The job ID first (stderr), then a wait to the job's end (or
// to `--detach-after`), exiting with the job's status; Ctrl-C, SIGTERM or SIGHUP detach and the job runs on.
import { startAutoGcIfDue } from "../auto-gc.ts";
import type { Ctx } from "../context.ts";
import { invalid } from "../core/model/errors.ts";
import type { LaunchRequest, SubmitResponse, WaitResponse } from "../core/model/service-api.ts";
import { printArrayWait } from "./array-commands.ts";
import type { CliIo } from "./cli-io.ts";
import { type DetachSignal, detachOnSignals, quietAfter } from "./detach.ts";
import { arrayText, launchRequest, parseDuration, type RawLaunchOptions } from "./parse.ts";
import { humanDuration, styleFor } from "./render.ts";
import { liveLine, type Opts, optsOf, printWait, progressOf } from "./wait-output.ts";

/** Why a run answered before its job ended (`detach_reason`): its window passed, it waits in line, or a signal. */
export type DetachReason = "inline_timeout" | "queued" | "interrupted";

/** `--detach-after DURATION` (or its Awaitless 0.8 name `--inline-timeout`) in seconds; null: wait to the end. */
export function detachAfterSeconds(opts: Opts): number | null {
  const given = (
    [
      ["--detach-after", opts.detachAfter],
      ["--inline-timeout", opts.inlineTimeout],
    ] as const
  ).filter(([, v]) => v !== undefined);
  const seconds = given.map(([flag, v]) => {
    if (Array.isArray(v) || typeof v === "boolean")
      throw invalid(`${flag} takes one duration`, `write ${flag} once, e.g. ${flag} 30s`);
    return parseDuration(v as string, flag);
  });
  if (seconds.length === 2 && seconds[0] !== seconds[1])
    throw invalid(
      `--detach-after ${given[0]![1]} and --inline-timeout ${given[1]![1]} disagree: they are one option (--inline-timeout is its Awaitless 0.8 name)`,
      "give one of them",
    );
  return seconds[0] ?? null;
}

/** What `run` says on stderr as soon as the job exists, before it waits (an agent's shell tool may kill it later). */
function announce(id: string, replay: string, detachAfter: number | null): string {
  const how =
    detachAfter === null
      ? "waiting for it to end (Ctrl-C detaches; the job keeps running)"
      : `waiting up to ${humanDuration(detachAfter)}, then detaching (the job keeps running)`;
  return `${id} ${replay}; ${how}\n`;
}

function replayWords(sub: { idempotent_replay: boolean; launch_resumed?: boolean }): string {
  if (sub.launch_resumed) return "already submitted, launched now";
  return sub.idempotent_replay ? "already submitted" : "submitted";
}

/** A job that waits in line (a busy queue, a resource, a parent): the adaptive form answers at once, as over MCP. */
function waitsInLine(sub: SubmitResponse, req: LaunchRequest): boolean {
  return (
    sub.state === "queued" &&
    (sub.job.queue !== null || (req.resources?.length ?? 0) > 0 || (sub.job.after?.length ?? 0) > 0)
  );
}

export async function runCommand(args: unknown[], io: CliIo, makeCtx: () => Promise<Ctx>): Promise<number> {
  const opts = optsOf(args);
  const req = launchRequest(opts["--"] ?? [], opts as RawLaunchOptions);
  const detachAfter = detachAfterSeconds(opts);
  const ctx = await makeCtx();
  const live = liveLine(io, styleFor(io.stderr, io.env), Boolean(opts.json));
  // Signals are ours from before the launch: one that comes while it is under way detaches once the ID is known.
  const detacher = detachOnSignals(io, () => live.done(), "detached");
  try {
    startAutoGcIfDue(ctx);
    const timeoutMs = detachAfter === null ? null : detachAfter * 1000;
    const waitOpts = { timeoutMs, signal: detacher.signal, ...progressOf(live) };
    if (opts.array !== undefined) {
      const a = await ctx.arrays.submit(req, arrayText(opts.array));
      const what = `${replayWords(a)}: array ${a.array}, ${a.tasks} tasks`;
      io.stderr.write(announce(a.job_id, what, detachAfter));
      detacher.know(a.job_id);
      const w = await ctx.arrays.wait(a.job_id, waitOpts);
      live.done();
      return printArrayWait(io, opts, w, quietAfter(detacher.by, opts, io));
    }
    const sub = await ctx.service.submit(req);
    io.stderr.write(announce(sub.job_id, replayWords(sub), detachAfter));
    detacher.know(sub.job_id);
    const inLine = detachAfter !== null && waitsInLine(sub, req);
    const w = await ctx.service.wait(sub.job_id, inLine ? { ...waitOpts, timeoutMs: 0 } : waitOpts);
    live.done();
    const reason = detachReason(w, inLine, detacher.by);
    if (reason !== undefined && detacher.by === null && !opts.json)
      io.stderr.write(
        reason === "queued"
          ? "detached at once: the job waits in its queue\n"
          : `detached after ${humanDuration(detachAfter)}: the job keeps running\n`,
      );
    const answer = {
      ...w,
      delivery: reason === undefined ? ("inline" as const) : ("detached" as const),
      ...(reason === undefined ? {} : { detach_reason: reason }),
      idempotent_replay: sub.idempotent_replay,
      ...(sub.launch_resumed ? { launch_resumed: true as const } : {}),
    };
    return await printWait(io, opts, ctx, answer, quietAfter(detacher.by, opts, io));
  } finally {
    detacher.dispose();
  }
}

function detachReason(w: WaitResponse, inLine: boolean, by: DetachSignal | null): DetachReason | undefined {
  if (w.wait_state === "complete") return undefined;
  if (by !== null) return "interrupted";
  return inLine ? "queued" : "inline_timeout";
}
