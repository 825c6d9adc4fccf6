// `awaitless logs JOB` without --follow: its options as one LogsRequest, the lines on stdout, and on stderr what was
// left out with the command line that reads on.
import { invalid } from "../core/errors.ts";
import { isTerminal } from "../core/job.ts";
import type { JobServiceApi, LogsRequest, LogsResponse } from "../core/service-types.ts";
import type { CliIo } from "./cli-io.ts";
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
  return {
    job_id: jobId,
    stream,
    ...(opts.tail !== undefined ? { tail_lines: parseIntOption(opts.tail, "--tail", 1, 10_000_000) } : {}),
    ...(opts.head !== undefined ? { head: parseIntOption(opts.head, "--head", 1, 10_000_000) } : {}),
    ...(opts.lines !== undefined ? parseLineRange(opts.lines) : {}),
    ...(opts.grep !== undefined ? { grep: String(opts.grep) } : {}),
  };
}

const quote = (s: string): string => (/^[\w./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command line that reads on from a cursor, keeping the request's other options. */
function readOn(req: LogsRequest, range: string): string {
  const words = ["awaitless", "logs", req.job_id];
  if (req.stream && req.stream !== "both") words.push("--stream", req.stream);
  if (req.grep !== undefined) words.push("--grep", quote(req.grep));
  if (req.head !== undefined) words.push("--head", String(req.head));
  if (req.tail_lines !== undefined) words.push("--tail", String(req.tail_lines));
  words.push("--lines", range);
  return words.join(" ");
}

export async function printLogs(
  service: JobServiceApi,
  io: CliIo,
  req: LogsRequest,
  json: boolean,
): Promise<LogsResponse> {
  const r = await service.logs(req);
  if (json) {
    io.stdout.write(`${toJson(r)}\n`);
    return r;
  }
  const style = styleFor(io.stdout, io.env);
  const note = styleFor(io.stderr, io.env);
  for (const s of ["stdout", "stderr"] as const) {
    const text = r[s];
    const page = r[`${s}_page`];
    if (text === undefined || page === undefined) continue;
    if (req.stream === "both") io.stdout.write(`${paint(style, "dim", `── ${s} ──`)}\n`);
    if (text) io.stdout.write(text);
    else if (req.grep !== undefined && page.matches_total === 0) {
      const where =
        req.from_line !== undefined || req.to_line !== undefined
          ? "in the lines asked for"
          : "in the whole log";
      const kept = page.dropped_middle ? " (as the log cap kept it)" : "";
      io.stdout.write(
        `${paint(style, "dim", `(no ${s} line matches ${JSON.stringify(req.grep)} ${where}${kept})`)}\n`,
      );
    } else if (req.stream !== "both" || s === "stdout")
      io.stdout.write(`${paint(style, "dim", `(no ${s} output${isTerminal(r.job_state) ? "" : " yet"})`)}\n`);
    if (page.left_out === "") continue;
    const next: string[] = [];
    if (page.next_to_line !== undefined) next.push(`earlier: ${readOn(req, `:${page.next_to_line}`)}`);
    if (page.next_from_line !== undefined) next.push(`further: ${readOn(req, `${page.next_from_line}:`)}`);
    io.stderr.write(`${paint(note, "dim", `(${s} left out: ${page.left_out})`)}\n`);
    for (const n of next) io.stderr.write(`${paint(note, "dim", n)}\n`);
  }
  return r;
}
