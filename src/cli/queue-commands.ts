// `awaitless queue create|set|delete|list`: named queues on this machine or a host.

import type { Ctx } from "../context.ts";
import { EXIT, invalid } from "../core/model/errors.ts";
import { arrayOfQueue } from "../core/model/queue-names.ts";
import type { QueueListing } from "../core/model/service-api.ts";
import { didYouMean } from "../core/util/nearest-name.ts";
import type { CliIo } from "./cli-io.ts";
import { toJson } from "./output.ts";
import { parseIntOption } from "./parse.ts";
import { humanDuration, paint, type Style, styleFor, table } from "./render.ts";

type Opts = Record<string, unknown> & { json?: boolean };

export const QUEUE_ACTIONS = ["create", "set", "delete", "list"] as const;

function out(io: CliIo, text: string): void {
  io.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export async function queueCommand(args: unknown[], io: CliIo, makeCtx: () => Promise<Ctx>): Promise<number> {
  const opts = (args[args.length - 1] ?? {}) as Opts;
  const action = String(args[0] ?? "");
  const name = args[1] === undefined ? undefined : String(args[1]);
  const host = opts.host === undefined ? undefined : String(opts.host);
  if (action === "create") {
    if (name === undefined) {
      throw invalid("queue create needs a name", "awaitless queue create NAME --concurrency N");
    }
    if (opts.concurrency === undefined) {
      throw invalid(
        `queue create ${name} needs --concurrency`,
        `awaitless queue create ${name} --concurrency N (N jobs run at once)`,
      );
    }
    const concurrency = parseIntOption(opts.concurrency, "--concurrency", 1, 10_000);
    const ctx = await makeCtx();
    const q = await ctx.service.createQueue(name, concurrency, host);
    if (opts.json) out(io, toJson(q));
    else
      out(
        io,
        `${q.created ? "created" : "already exists:"} queue ${q.name} on ${q.target}, concurrency ${q.concurrency}; use it with --queue ${q.name}`,
      );
    return EXIT.ok;
  }
  if (action === "set") {
    if (name === undefined || opts.concurrency === undefined)
      throw invalid(
        `queue set needs a name and --concurrency${name === undefined ? "" : ` (queue ${name})`}`,
        `awaitless queue set ${name ?? "NAME"} --concurrency N`,
      );
    const concurrency = parseIntOption(opts.concurrency, "--concurrency", 1, 10_000);
    const ctx = await makeCtx();
    const q = await ctx.service.setQueue(name, concurrency, host);
    if (opts.json) out(io, toJson(q));
    else {
      const kept =
        q.waiting_with_previous > 0 && q.previous_concurrency !== q.concurrency
          ? `; the ${q.waiting_with_previous} job(s) already in line keep ${q.previous_concurrency} until they start`
          : "";
      out(
        io,
        `queue ${q.name} on ${q.target}: concurrency ${q.previous_concurrency} → ${q.concurrency} for jobs launched from now on${kept}`,
      );
    }
    return EXIT.ok;
  }
  if (action === "delete") {
    if (name === undefined) throw invalid("queue delete needs a name", "awaitless queue delete NAME");
    const ctx = await makeCtx();
    const q = await ctx.service.deleteQueue(name, host);
    out(io, opts.json ? toJson(q) : `deleted queue ${q.name} on ${q.target}`);
    return EXIT.ok;
  }
  if (action === "list") {
    if (name !== undefined) {
      const arrayId = arrayOfQueue(name);
      throw invalid(
        `queue list takes no name (got ${name})`,
        arrayId === undefined
          ? "awaitless queue list [--host NAME] [--all]"
          : `${name} is job array ${arrayId}'s queue: awaitless status ${arrayId} shows its tasks, awaitless queue list --all every array's queue`,
      );
    }
    const ctx = await makeCtx();
    const listing = await ctx.service.listQueues(host, { arrays: opts.all === true });
    out(io, opts.json ? toJson(listing) : renderQueues(listing, styleFor(io.stdout, io.env)));
    return EXIT.ok;
  }
  throw invalid(
    `unknown queue action ${JSON.stringify(action)}${didYouMean(action, QUEUE_ACTIONS)}`,
    "use `awaitless queue create|set NAME --concurrency N`, `awaitless queue delete NAME` or `awaitless queue list`",
  );
}

export function renderQueues({ queues, hidden_array_queues: hidden }: QueueListing, style: Style): string {
  const arrays =
    hidden === 0
      ? []
      : [
          paint(
            style,
            "dim",
            `${hidden} job array${hidden === 1 ? "" : "s"} active, ${hidden === 1 ? "its private queue" : "their private queues"} not shown (awaitless queue list --all shows ${hidden === 1 ? "it" : "them"})`,
          ),
        ];
  if (queues.length === 0) {
    const none = "no queues yet; create one: awaitless queue create NAME --concurrency N";
    return [none, ...arrays].join("\n");
  }
  const rows = queues.map((q) => [
    q.name,
    q.target,
    String(q.concurrency),
    String(q.running),
    String(q.queued),
    q.eta_seconds === null ? "—" : `~${humanDuration(q.eta_seconds)}`,
  ]);
  const lines = [table(["QUEUE", "TARGET", "CONCURRENCY", "RUNNING", "QUEUED", "ETA"], rows, style)];
  for (const q of queues) {
    if (q.waiting.length === 0) continue;
    const order = q.waiting.map((w) => `${w.position}. ${w.job_id}`).join("  ");
    lines.push(`${paint(style, "dim", `${q.name} waiting:`)} ${order}`);
  }
  return [...lines, ...arrays].join("\n");
}
