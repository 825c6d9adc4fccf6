// The text of a get_job_logs answer: each stream's lines with what they are, what was left out, how to read on.
import { isTerminal } from "../core/model/job.ts";
import type { LogsRequest, LogsResponse } from "../core/model/service-api.ts";

/** What a pattern was searched over, in words. */
function scope(req: LogsRequest, dropped: boolean): string {
  const range =
    req.from_line !== undefined || req.to_line !== undefined
      ? `lines ${req.from_line ?? 1}–${req.to_line ?? "end"}`
      : "the whole log";
  return dropped ? `${range} as the log cap kept it` : range;
}

export function logsText(req: LogsRequest, resp: LogsResponse): string {
  const parts: string[] = [];
  for (const stream of ["stdout", "stderr"] as const) {
    const text = resp[stream];
    const page = resp[`${stream}_page`];
    if (text === undefined || page === undefined) continue;
    const size = `${resp[`${stream}_bytes`]} bytes`;
    if (req.grep !== undefined && page.matches_total === 0) {
      parts.push(
        `(${stream}: no line matches ${JSON.stringify(req.grep)} in ${scope(req, page.dropped_middle !== undefined)}, ${size}${isTerminal(resp.job_state) ? "" : " so far"})`,
      );
      continue;
    }
    if (text === "") {
      const yet = isTerminal(resp.job_state) ? "" : " yet";
      parts.push(
        req.from_line !== undefined && page.lines_total !== 0
          ? `(${stream}: no lines from line ${req.from_line} on${yet}: the log is shorter)`
          : `(${stream}: no output${yet})`,
      );
      continue;
    }
    const what =
      req.grep !== undefined
        ? `${page.lines} of ${page.matches_total} matching lines in ${scope(req, page.dropped_middle !== undefined)}`
        : `lines ${page.first_line}–${page.last_line}${page.lines_total !== undefined ? ` of ${page.lines_total}` : ""}`;
    // The lines too: a client whose model reads only the text (docs/mcp.md) must get them here.
    parts.push(`${stream}: ${what} (${resp[`${stream}_bytes`]} bytes in all):\n${text.replace(/\n$/, "")}`);
    const more: string[] = [];
    if (page.next_to_line !== undefined) more.push(`earlier: to_line ${page.next_to_line}`);
    if (page.next_from_line !== undefined) more.push(`further: from_line ${page.next_from_line}`);
    if (page.left_out !== "")
      parts.push(
        `(${stream} left out: ${page.left_out}${more.length ? `; call get_job_logs again with ${more.join(", or ")}` : ""})`,
      );
  }
  return parts.join("\n") || `Job ${resp.job_id} has no output.`;
}
