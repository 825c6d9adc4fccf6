// CLI actions on job arrays: submit/run --array, and wait, status, cancel, inspect of an array's ID.
import type { Ctx } from "../context.ts";
import type { ArrayView, ArrayWaitResponse } from "../core/model/array-views.ts";
import { EXIT } from "../core/model/errors.ts";
import type { LaunchRequest } from "../core/model/service-api.ts";
import type { CliIo } from "./cli-io.ts";
import { invokedName } from "./invoked-as.ts";
import { toJson } from "./output.ts";
import { displayArgv, paint, styleFor } from "./render.ts";

type Opts = Record<string, unknown> & { json?: boolean };

function out(io: CliIo, text: string): void {
  io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** One line of counts: `100 tasks: 97 succeeded, 3 failed (indices 4 17 80)`. */
export function arrayLine(v: ArrayView): string {
  const counts = Object.entries(v.counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
  const failed = v.failed_indices.length > 0 ? `; failed indices ${v.failed_indices.join(",")}` : "";
  const unlaunched = v.unlaunched_indices ? `; ${v.unlaunched_indices.length} not launched` : "";
  const removed = v.removed_indices ? `; ${v.removed_indices.length} removed by gc` : "";
  return `${v.job_id} array ${v.array}${v.array.includes("%") ? "" : ` (all at once)`} ${v.state}: ${v.tasks} tasks: ${counts || "none shown"}${failed}${unlaunched}${removed}`;
}

function exitFor(state: string): number {
  if (state === "succeeded") return EXIT.ok;
  if (state === "failed") return EXIT.jobFailed;
  if (state === "cancelled") return EXIT.cancelled;
  if (state === "lost") return EXIT.lost;
  return EXIT.waitTimedOut;
}

export async function submitArray(
  io: CliIo,
  opts: Opts,
  ctx: Ctx,
  req: LaunchRequest,
  array: string,
): Promise<number> {
  const r = await ctx.arrays.submit(req, array);
  if (opts.json) out(io, toJson(r));
  else {
    out(io, r.job_id);
    const me = invokedName(io.env);
    io.stderr.write(
      `${r.idempotent_replay ? "already submitted" : "submitted"}: ${arrayLine(r)}; wait for it: ${paint(styleFor(io.stderr, io.env), "bold", `${me} wait ${r.job_id}`)} (one task: ${r.job_id}.INDEX)\n`,
    );
  }
  return EXIT.ok;
}

/** The answer of a wait on an array; `quiet`: nothing on stdout (a signal detached and said so on stderr). */
export function printArrayWait(io: CliIo, opts: Opts, w: ArrayWaitResponse, quiet = false): number {
  const next =
    w.wait_state === "complete"
      ? {}
      : {
          next_action: `The array is still ${w.job_state}: only this wait ended. Run \`awaitless wait ${w.job_id}\` to collect the rest.`,
          next_command: `awaitless wait ${w.job_id}`,
        };
  if (quiet) {
    // said on stderr
  } else if (opts.json) out(io, toJson({ ...w, ...next }));
  else {
    const lines = [arrayLine(w)];
    if (next.next_command)
      lines.push(`next: ${next.next_command.replace(/^awaitless /, `${invokedName(io.env)} `)}`);
    out(io, lines.join("\n"));
  }
  return w.wait_state === "complete" ? exitFor(w.job_state) : EXIT.waitTimedOut;
}

export async function arrayStatus(
  io: CliIo,
  opts: Opts,
  ctx: Ctx,
  id: string,
  all: boolean,
): Promise<number> {
  const s = await ctx.arrays.status(id);
  if (opts.json) {
    const { task_list, ...rest } = s;
    out(io, toJson(all ? s : rest));
    return EXIT.ok;
  }
  const lines = [arrayLine(s), `command  ${displayArgv(s.argv, 200)}`];
  if (all)
    for (const t of s.task_list)
      lines.push(
        `  ${s.job_id}.${t.index}  ${t.job_id}  ${t.state}${t.exit_code === null ? "" : ` exit ${t.exit_code}`}`,
      );
  out(io, lines.join("\n"));
  return EXIT.ok;
}

export async function cancelArray(
  io: CliIo,
  opts: Opts,
  ctx: Ctx,
  id: string,
  grace?: number,
): Promise<number> {
  const r = await ctx.arrays.cancel(id, grace);
  if (opts.json) out(io, toJson(r));
  else
    out(
      io,
      `${arrayLine(r.array)}\n${r.cancel_requested} tasks cancelled, ${r.already_terminal} had already ended`,
    );
  return r.array.state === "running" || r.array.state === "queued" ? EXIT.waitTimedOut : EXIT.ok;
}
