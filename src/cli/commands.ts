// CLI actions: each turns parsed options into a JobService call and prints the answer.

import { startAutoGcIfDue } from "../auto-gc.ts";
import type { Ctx } from "../context.ts";
import { EXIT, invalid } from "../core/model/errors.ts";
import { isTerminal, type JobResult, type JobState } from "../core/model/job.ts";
import type { FollowEvent, LeftoverStop } from "../core/model/service-api.ts";
import type { CliIo } from "./cli-io.ts";
import { detachOnSignals, quietAfter } from "./detach.ts";
import { invokedName } from "./invoked-as.ts";
import {
  cancelJson,
  type EarlierAttempt,
  renderGc,
  renderList,
  renderResult,
  renderStatus,
  toJson,
} from "./output.ts";
import {
  arrayText,
  launchRequest,
  parseDuration,
  parseIntOption,
  parseSize,
  type RawLaunchOptions,
} from "./parse.ts";
import { paint, styleFor } from "./render.ts";
import { shown, shownJson } from "./terminal-safe.ts";
import {
  earlierAttempts,
  exitCodeFor,
  liveLine,
  type Opts,
  optsOf,
  out,
  printWait,
  progressOf,
} from "./wait-output.ts";

export type Action = (args: unknown[], io: CliIo, makeCtx: () => Promise<Ctx>) => Promise<number>;

export const COMMANDS: Record<string, Action> = {
  async run(args, io, makeCtx) {
    const { runCommand } = await import("./run-command.ts");
    return runCommand(args, io, makeCtx);
  },

  async submit(args, io, makeCtx) {
    const opts = optsOf(args);
    const req = launchRequest(opts["--"] ?? [], opts as RawLaunchOptions);
    const ctx = await makeCtx();
    if (opts.array !== undefined)
      return (await import("./array-commands.ts")).submitArray(io, opts, ctx, req, arrayText(opts.array));
    const r = await ctx.service.submit(req);
    startAutoGcIfDue(ctx);
    if (opts.json) out(io, toJson(r));
    else {
      out(io, r.job_id);
      const style = styleFor(io.stderr, io.env);
      io.stderr.write(
        `${r.launch_resumed ? "already submitted, launched now (its first client stopped before launching it)" : r.idempotent_replay ? "already submitted" : "submitted"} (${r.state}); wait for it: ${paint(style, "bold", `${invokedName(io.env)} wait ${r.job_id}`)}\n`,
      );
    }
    return EXIT.ok;
  },

  async wait(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    // the ID (or --last) was resolved by cli.ts before the action
    const jobId = String(args[0]);
    const timeoutMs =
      opts.timeout !== undefined ? parseDuration(opts.timeout as string, "--timeout") * 1000 : null;
    const live = liveLine(io, styleFor(io.stderr, io.env), Boolean(opts.json));
    const detacher = detachOnSignals(io, () => live.done(), "stopped waiting");
    detacher.know(jobId);
    try {
      const waitOpts = { timeoutMs, signal: detacher.signal, ...progressOf(live) };
      if (ctx.arrays.isArray(jobId)) {
        const w = await ctx.arrays.wait(jobId, waitOpts);
        live.done();
        return (await import("./array-commands.ts")).printArrayWait(
          io,
          opts,
          w,
          quietAfter(detacher.by, opts, io),
        );
      }
      const w = await ctx.service.wait(jobId, waitOpts);
      live.done();
      return await printWait(io, opts, ctx, w, quietAfter(detacher.by, opts, io));
    } finally {
      detacher.dispose();
    }
  },

  async results(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    // an array's ID stands for its tasks: the feed delivers each as it ends
    const ids = ctx.arrays.expandAll((args[0] as string[] | undefined) ?? [], 500);
    const timeoutMs =
      opts.timeout !== undefined ? parseDuration(opts.timeout as string, "--timeout") * 1000 : null;
    const limit = opts.limit !== undefined ? parseIntOption(opts.limit, "--limit", 1, 500) : undefined;
    let cursor = opts.after !== undefined ? String(opts.after) : undefined;
    const style = styleFor(io.stdout, io.env);
    let worst: number = EXIT.ok;
    for (;;) {
      const r = await ctx.service.completions(ids, {
        timeoutMs,
        ...(cursor !== undefined ? { after_cursor: cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      for (const c of r.completions) worst = Math.max(worst, exitCodeFor(c.state));
      if (opts.json) {
        const items = r.completions.map(
          (c) =>
            `{"completion_id":${JSON.stringify(c.completion_id)},"finished_at":${JSON.stringify(c.finished_at)},"job_id":${JSON.stringify(c.job_id)},"observed_at":${JSON.stringify(c.observed_at)},"result":${ctx.service.resultJson(c.job_id) ?? "null"},"state":${JSON.stringify(c.state)}}`,
        );
        const { completions: _c, ...rest } = r;
        out(io, `${JSON.stringify(rest).slice(0, -1)},"completions":[${items.join(",")}]}`);
      } else {
        for (const c of r.completions)
          out(io, `${paint(style, "dim", c.completion_id)}  ${renderResult(c.result, style)}\n`);
        if (r.completions.length === 0 && r.wait_timed_out) out(io, "nothing completed before the timeout");
      }
      cursor = r.next_cursor;
      const more = Boolean(opts.drain) && (r.has_more || (r.active_job_ids.length > 0 && !r.wait_timed_out));
      if (!more) {
        if (!opts.json && r.active_job_ids.length > 0) {
          out(
            io,
            `still active: ${r.active_job_ids.join(" ")}\nnext: awaitless results ${ids.join(" ")} --after ${cursor}`,
          );
        }
        return r.active_job_ids.length > 0 && worst === EXIT.ok ? EXIT.waitTimedOut : worst;
      }
    }
  },

  async status(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    if (ctx.arrays.isArray(String(args[0])))
      return (await import("./array-commands.ts")).arrayStatus(io, opts, ctx, String(args[0]), false);
    const s = ctx.arrays.annotate([await ctx.service.status(String(args[0]))])[0]!;
    if (opts.json) out(io, toJson(s));
    else out(io, renderStatus(s, styleFor(io.stdout, io.env), await endOf(ctx, s.job_id)));
    return s.host_unreachable ? EXIT.connection : EXIT.ok;
  },

  async logs(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    const jobId = String(args[0]);
    if (ctx.arrays.isArray(jobId))
      throw invalid(
        `${jobId} is a job array: its logs are its tasks'`,
        `name one task: awaitless logs ${jobId}.INDEX (awaitless inspect ${jobId} lists them)`,
      );
    const stream = (opts.stream as string | undefined) ?? "both";
    if (!["stdout", "stderr", "both"].includes(stream))
      throw invalid(`--stream ${stream}`, "use stdout, stderr or both");
    const { localLogFile, logsRequest, printLogs } = await import("./logs-command.ts");
    const req = logsRequest(jobId, stream as "stdout" | "stderr" | "both", opts);
    if (
      opts.follow &&
      (req.grep !== undefined || req.head !== undefined || req.from_line || req.to_line || opts.all)
    )
      throw invalid(
        "--follow prints every new line as it comes; it does not combine with --grep, --head, --lines or --all",
        "drop --follow to search or page the log, or drop the filter to follow it",
      );
    if (opts.follow) return followLogs(ctx, io, jobId, stream as "stdout" | "stderr" | "both", opts);
    await printLogs(ctx.service, io, req, opts.json === true, {
      all: opts.all === true,
      fileOf: localLogFile(ctx.service, jobId),
    });
    return EXIT.ok;
  },

  async cancel(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    const grace =
      opts.gracePeriod !== undefined
        ? parseDuration(opts.gracePeriod as string, "--grace-period")
        : undefined;
    if (ctx.arrays.isArray(String(args[0])))
      return (await import("./array-commands.ts")).cancelArray(io, opts, ctx, String(args[0]), grace);
    const r = await ctx.service.cancel(String(args[0]), grace);
    if (opts.json) out(io, cancelJson(r));
    else if (r.leftover && r.leftover.action !== "none" && r.job_state !== "lost")
      out(io, `${r.job_id} had ended (${r.job_state}) keeping processes running: ${r.leftover.detail}`);
    else if (r.leftover && r.leftover.action !== "none")
      out(io, shown(`${r.job_id} is ${r.job_state} (its wrapper was killed): ${leftoverText(r.leftover)}`));
    else if (r.already_terminal) out(io, `${r.job_id} had already ended (${r.job_state}); nothing to cancel`);
    else out(io, `${r.job_id} ${r.job_state}`);
    return r.already_terminal || isTerminal(r.job_state) ? EXIT.ok : EXIT.waitTimedOut;
  },

  async list(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    const req = {
      ...(opts.state !== undefined ? { state: String(opts.state) as JobState } : {}),
      ...(opts.name !== undefined ? { name: String(opts.name) } : {}),
      ...(opts.host !== undefined ? { host: String(opts.host) } : {}),
      ...(opts.queue !== undefined ? { queue: String(opts.queue) } : {}),
      limit: opts.limit !== undefined ? parseIntOption(opts.limit, "--limit", 1, 10_000) : 20,
    };
    const style = styleFor(io.stdout, io.env);
    let shownCount: number;
    let total: number;
    if (opts.json || opts.tasks) {
      // tasks as jobs (each with its array_task), and the progress of the arrays they belong to
      const page = await ctx.service.listPage(req);
      const shown = ctx.arrays.annotate(page.jobs);
      const arrays = ctx.arrays.progress(page.jobs.map((j) => j.job_id));
      const listed = arrays.length > 0 ? { jobs: shown, arrays } : { jobs: shown };
      out(io, opts.json ? toJson(listed) : renderList(shown, style, arrays));
      [shownCount, total] = [page.jobs.length, page.total];
    } else {
      // for people each array is one row, as the dashboard shows it
      const { listing } = await import("../core/model/listing.ts");
      const w = await listing(ctx.service, req);
      out(io, renderList(w.jobs, style, [], w.arrays));
      if (w.arrays.length > 0)
        io.stderr.write(
          `${paint(styleFor(io.stderr, io.env), "dim", "an array is one row: list --tasks lists tasks, status ARRAY_ID counts them")}\n`,
        );
      [shownCount, total] = [w.jobs.length + w.arrays.length, w.total];
    }
    if (!opts.json && total > shownCount)
      io.stderr.write(`${shownCount} of ${total} shown (--limit ${Math.min(total, 10_000)} for all)\n`);
    return EXIT.ok;
  },

  async inspect(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    if (ctx.arrays.isArray(String(args[0])))
      return (await import("./array-commands.ts")).arrayStatus(io, opts, ctx, String(args[0]), true);
    const r = await ctx.service.inspect(String(args[0]));
    if (opts.json) {
      out(io, toJson(r, r.result ? ctx.service.resultJson(r.job.job_id) : null));
      return EXIT.ok;
    }
    const style = styleFor(io.stdout, io.env);
    const lines = [
      renderStatus(ctx.arrays.annotate([r.job])[0]!, style, await endOf(ctx, r.job.job_id)),
      "",
      paint(style, "bold", "history"),
    ];
    for (const h of r.history) {
      lines.push(
        shown(`  ${h.at}  ${h.from_state ?? "∅"} → ${h.to_state}${h.reason ? `  (${h.reason})` : ""}`),
      );
    }
    lines.push("", `${paint(style, "bold", "job dir")}  ${shown(r.job_dir)}`);
    if (r.completion) lines.push(`${paint(style, "bold", "completion")}  ${shown(r.completion)}`);
    if (r.job.backend_id) lines.push(`${paint(style, "bold", "backend id")}  ${shownJson(r.job.backend_id)}`);
    lines.push(`${paint(style, "bold", "spec")}  ${shownJson(r.spec)}`);
    out(io, lines.join("\n"));
    return EXIT.ok;
  },

  async doctor(args, io, makeCtx) {
    const { doctor } = await import("./doctor.ts");
    return doctor(optsOf(args), io, makeCtx);
  },

  async demo(args, io) {
    const { demo } = await import("./demo.ts");
    return demo(optsOf(args), io);
  },

  async gc(args, io, makeCtx) {
    const opts = optsOf(args);
    const ctx = await makeCtx();
    const d = ctx.config.defaults;
    const olderS =
      opts.olderThan !== undefined
        ? parseDuration(opts.olderThan as string, "--older-than")
        : d.retention_days * 86_400;
    const keep =
      opts.keep !== undefined ? parseIntOption(opts.keep, "--keep", 0, 100_000_000) : d.retention_max_jobs;
    const maxBytes =
      opts.maxBytes !== undefined ? parseSize(opts.maxBytes as string, "--max-bytes") : d.store_quota_bytes;
    const r = await ctx.service.gc({
      olderThanSeconds: olderS,
      keep,
      maxBytes,
      dryRun: Boolean(opts.dryRun),
      forgetUnreachable: Boolean(opts.forgetUnreachable),
    });
    if (opts.json) out(io, toJson(r));
    else out(io, renderGc(r));
    return EXIT.ok;
  },

  async import(args, io, makeCtx) {
    const { importCommand } = await import("./import-command.ts");
    return importCommand(args, io, makeCtx);
  },

  async queue(args, io, makeCtx) {
    const { queueCommand } = await import("./queue-commands.ts");
    return queueCommand(args, io, makeCtx);
  },

  async mcp(args, _io, makeCtx) {
    const { startMcp, parseHoldSeconds } = await import("../mcp-entry.ts");
    const holdMs = parseHoldSeconds(optsOf(args).holdSeconds);
    const ctx = await makeCtx();
    await startMcp(ctx, holdMs);
    return EXIT.ok;
  },

  async ui(args, io, makeCtx) {
    const { uiCommand } = await import("./ui-command.ts");
    return uiCommand(optsOf(args), io, makeCtx);
  },

  async mcpConfig(args, io) {
    const { mcpConfigCommand } = await import("./mcp-config.ts");
    return mcpConfigCommand(args[0] as string | undefined, optsOf(args), io);
  },

  async version(args, io) {
    const opts = optsOf(args);
    const { VERSION } = await import("../version.ts");
    out(io, opts.json ? JSON.stringify({ version: VERSION }) : `awaitless ${VERSION}`);
    return EXIT.ok;
  },
};

/** `logs --follow`: the service's follow, each new piece of text on stdout as it comes (JSON lines with --json). */
async function followLogs(
  ctx: Ctx,
  io: CliIo,
  jobId: string,
  stream: "stdout" | "stderr" | "both",
  opts: Opts,
): Promise<number> {
  const ctl = new AbortController();
  const onSig = () => ctl.abort();
  process.once("SIGINT", onSig);
  try {
    for await (const e of ctx.service.followLogs(jobId, stream, ctl.signal)) {
      if (e.kind === "text")
        io.stdout.write(opts.json ? `${JSON.stringify({ stream: e.stream, text: e.text })}\n` : e.text);
      else if (e.kind === "ended") return followEnded(io, e, Boolean(opts.json));
      else {
        io.stderr.write(`${e.job_id} is still ${e.state}; it keeps running (awaitless wait ${e.job_id})\n`);
        return EXIT.waitTimedOut;
      }
    }
    throw new Error(`the follow of ${jobId} ended without saying how`);
  } finally {
    process.off("SIGINT", onSig);
  }
}

/**
 * The end of `logs --follow`: stdout carries only the log, so the final state line goes to stderr (with
 * --json, a last record without `stream` on stdout); the exit status is the job's, as for `wait`.
 */
function followEnded(io: CliIo, end: Extract<FollowEvent, { kind: "ended" }>, json: boolean): number {
  if (json) {
    const { job_id, state, exit_code, signal, reason, finished_at } = end;
    out(io, JSON.stringify({ job_id, state, exit_code, signal, reason, finished_at }));
  } else {
    const style = styleFor(io.stderr, io.env);
    const line = end.result
      ? renderResult(end.result, style).split("\n", 1)[0]!
      : `${end.job_id} ${end.state}`;
    io.stderr.write(`${line}\n`);
  }
  return exitCodeFor(end.state);
}

/** What cancel did about a lost job's leftover command group, as one sentence. */
function leftoverText(l: LeftoverStop): string {
  if (l.action === "signalled") return `its command was still running; ${l.detail}`;
  if (l.action === "stopping") return `its command is being stopped; ${l.detail}`;
  return `its command was not signalled: ${l.detail}`;
}

/** What a status shows of a job that ended: its stored result, and a retried job's earlier attempts. */
async function endOf(
  ctx: Ctx,
  jobId: string,
): Promise<{ result: JobResult | null; earlier: EarlierAttempt[] }> {
  const raw = ctx.service.resultJson(jobId);
  const result = raw === null ? null : (JSON.parse(raw) as JobResult);
  return { result, earlier: result ? await earlierAttempts(ctx, result) : [] };
}
