// `awaitless logs JOB` without --follow: its options as one LogsRequest, the lines on stdout with a marker where lines
// were left out, on stderr the command line that reads on; `--all` pages through everything.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { invalid } from "../core/model/errors.ts";
import { isTerminal } from "../core/model/job.ts";
import type { JobServiceApi, LogsRequest } from "../core/model/service-api.ts";
import type { CliIo } from "./cli-io.ts";
import { invokedName } from "./invoked-as.ts";
import { toJson } from "./output.ts";
import { parseIntOption } from "./parse.ts";
import { paint, styleFor } from "./render.ts";

type Stream = "stdout" | "stderr" | "both";

/** `--lines A:B`, `A:`, `:B` or `A` (one line) → from_line / to_line. */
export function parseLineRange(v: unknown): { from_line?: number; to_line?: number } {
  const text = String(v);
  const m = /^(\d*)(?::(\d*))?$/.exec(text);
  const bad = () =>
    invalid(
      `--lines ${JSON.stringify(text)}`,
      "give a line range such as 1200:1300, 1200: (to the end) or :1300",
    );
  if (!m || (m[1] === "" && (m[2] ?? "") === "")) throw bad();
  const from = m[1] === "" ? undefined : parseIntOption(m[1], "--lines", 1, Number.MAX_SAFE_INTEGER);
  const to =
    m[2] === undefined
      ? from
      : m[2] === ""
        ? undefined
        : parseIntOption(m[2], "--lines", 1, Number.MAX_SAFE_INTEGER);
  return { ...(from !== undefined ? { from_line: from } : {}), ...(to !== undefined ? { to_line: to } : {}) };
}

export function logsRequest(jobId: string, stream: Stream, opts: Record<string, unknown>): LogsRequest {
  if (opts.ignoreCase && opts.grep === undefined)
    throw invalid(
      "-i (--ignore-case) applies to --grep, and no --grep was given",
      "add --grep PATTERN, e.g. awaitless logs JOB --grep error -i",
    );
  if (opts.all && (opts.head !== undefined || opts.tail !== undefined))
    throw invalid(
      `--all prints every line${opts.grep === undefined ? "" : " that matches"}; it does not combine with --${opts.head !== undefined ? "head" : "tail"}`,
      "drop one of them (--lines A:B narrows --all to a range)",
    );
  return {
    job_id: jobId,
    stream,
    ...(opts.tail !== undefined ? { tail_lines: parseIntOption(opts.tail, "--tail", 1, 10_000_000) } : {}),
    ...(opts.head !== undefined ? { head: parseIntOption(opts.head, "--head", 1, 10_000_000) } : {}),
    ...(opts.lines !== undefined ? parseLineRange(opts.lines) : {}),
    ...(opts.grep !== undefined ? { grep: String(opts.grep) } : {}),
    ...(opts.ignoreCase ? { ignore_case: true } : {}),
  };
}

const quote = (s: string): string => (/^[\w./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command line for the same request with other paging (`--lines RANGE`, or `--all`). */
function readOn(req: LogsRequest, paging: string[], me = "awaitless"): string {
  const words = [me, "logs", req.job_id];
  if (req.stream && req.stream !== "both") words.push("--stream", req.stream);
  if (req.grep !== undefined) words.push("--grep", quote(req.grep));
  if (req.ignore_case) words.push("-i");
  if (paging[0] !== "--all" && req.head !== undefined) words.push("--head", String(req.head));
  if (paging[0] !== "--all" && req.tail_lines !== undefined) words.push("--tail", String(req.tail_lines));
  if (paging[0] === "--all" && (req.from_line !== undefined || req.to_line !== undefined))
    words.push("--lines", `${req.from_line ?? ""}:${req.to_line ?? ""}`);
  words.push(...paging);
  return words.join(" ");
}

/** Where a stream's whole log is as a file on this machine (a local job whose log the cap never cut), if it is. */
export type LogFileOf = (stream: "stdout" | "stderr") => Promise<string | undefined>;

/** A local job's log file, when it holds the whole stream (no cap head beside it). */
export function localLogFile(service: JobServiceApi, jobId: string): LogFileOf {
  return async (stream) => {
    const r = await service.inspect(jobId);
    if (r.job.backend !== "local") return undefined;
    const file = join(r.job_dir, stream);
    return existsSync(file) && !existsSync(`${file}.head`) ? file : undefined;
  };
}

const PAGE_BYTES = 4 * 1024 * 1024;

export async function printLogs(
  service: JobServiceApi,
  io: CliIo,
  req: LogsRequest,
  json: boolean,
  how: { all?: boolean; fileOf?: LogFileOf } = {},
): Promise<void> {
  if (how.all && json)
    throw invalid(
      "--all prints the log as text; --json answers one page",
      `page through it with --json and --lines (next_from_line): ${readOn(req, ["--lines", "1:"])} --json`,
    );
  if (how.all) return printAll(service, io, req);
  const r = await service.logs(req);
  if (json) {
    io.stdout.write(`${toJson(r)}\n`);
    return;
  }
  const style = styleFor(io.stdout, io.env);
  const note = styleFor(io.stderr, io.env);
  const me = invokedName(io.env);
  for (const s of ["stdout", "stderr"] as const) {
    const text = r[s];
    const page = r[`${s}_page`];
    if (text === undefined || page === undefined) continue;
    // both streams: an empty stderr section is left out (nothing under its header)
    const empty = text === "" && page.left_out === "" && req.grep === undefined;
    if (req.stream === "both" && empty && s === "stderr") continue;
    if (req.stream === "both") io.stdout.write(`${paint(style, "dim", `── ${s} ──`)}\n`);
    // lines the byte budget cut from what was asked get a marker; lines --head/--tail did not ask for get none
    const limit = req.head ?? req.tail_lines;
    const budgetCut = limit === undefined || page.lines < limit;
    const marker = async (where: string) => {
      if (!budgetCut) return;
      const file = await how.fileOf?.(s);
      const all = `${readOn(req, ["--all"], me)} prints ${req.grep === undefined ? "all of it" : "every match"}`;
      const raw = file === undefined || req.grep !== undefined ? "" : `; the raw file: ${file}`;
      io.stdout.write(`${paint(style, "dim", `[… ${where} left out: ${all}${raw}]`)}\n`);
    };
    if (page.next_to_line !== undefined)
      await marker(
        req.grep === undefined
          ? `lines ${req.from_line ?? 1}–${page.next_to_line}`
          : `${(page.matches_total ?? 0) - page.lines} earlier matching line(s)`,
      );
    if (text) io.stdout.write(text);
    else if (req.grep !== undefined && page.matches_total === 0) {
      const where =
        req.from_line !== undefined || req.to_line !== undefined
          ? "in the lines asked for"
          : "in the whole log";
      const kept = page.dropped_middle ? " (as the log cap kept it)" : "";
      const how = req.ignore_case ? ", ignoring case," : "";
      io.stdout.write(
        `${paint(style, "dim", `(no ${s} line matches ${JSON.stringify(req.grep)}${how} ${where}${kept})`)}\n`,
      );
    } else if (req.stream !== "both" || s === "stdout")
      io.stdout.write(`${paint(style, "dim", `(no ${s} output${isTerminal(r.job_state) ? "" : " yet"})`)}\n`);
    if (page.next_from_line !== undefined)
      await marker(
        req.grep === undefined ? `lines from ${page.next_from_line} on` : "later matching line(s)",
      );
    if (page.left_out === "") continue;
    const next: string[] = [];
    if (page.next_to_line !== undefined)
      next.push(`earlier: ${readOn(req, ["--lines", `:${page.next_to_line}`])}`);
    if (page.next_from_line !== undefined)
      next.push(`further: ${readOn(req, ["--lines", `${page.next_from_line}:`])}`);
    io.stderr.write(`${paint(note, "dim", `(${s} left out: ${page.left_out})`)}\n`);
    for (const n of next) io.stderr.write(`${paint(note, "dim", n)}\n`);
  }
}

/** `--all`: every line (or match) of each asked stream, read forward a page at a time (memory stays bounded). */
async function printAll(service: JobServiceApi, io: CliIo, req: LogsRequest): Promise<void> {
  const style = styleFor(io.stdout, io.env);
  const streams =
    req.stream === "both" || req.stream === undefined ? (["stdout", "stderr"] as const) : [req.stream];
  for (const s of streams) {
    let from = req.from_line ?? 1;
    let printed = false;
    let headed = false;
    for (;;) {
      const r = await service.logs({ ...req, stream: s, from_line: from, max_bytes: PAGE_BYTES });
      const text = r[s] ?? "";
      const page = r[`${s}_page`];
      if (text && !headed && streams.length === 2) {
        io.stdout.write(`${paint(style, "dim", `── ${s} ──`)}\n`);
        headed = true;
      }
      if (text) io.stdout.write(text);
      printed ||= text !== "";
      if (page?.next_from_line === undefined || page.next_from_line <= from) break;
      from = page.next_from_line;
    }
    if (!printed && (s === "stdout" || req.grep !== undefined)) {
      const what =
        req.grep === undefined ? `(no ${s} output)` : `(no ${s} line matches ${JSON.stringify(req.grep)})`;
      io.stdout.write(`${paint(style, "dim", what)}\n`);
    }
  }
}
