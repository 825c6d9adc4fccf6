// The logs use case (both surfaces read logs through it): one query per stream answered by the backend's scan, then
// cleaned, redacted and cut to one byte budget shared by the streams.
import type { Stream } from "../backend/backend.ts";
import { invalid } from "../model/errors.ts";
import type { LogsRequest, LogsResponse } from "../model/service-api.ts";
import type { ServiceCore } from "../service/service-context.ts";
import { Redactor } from "../util/redact.ts";
import { splitBudget } from "../util/text.ts";
import { type LogQuery, type LogScan, shapeLines, shownBytes, toPage } from "./log-query.ts";
import { compileLogPattern, foldCase, type LogPattern } from "./pattern.ts";

export const DEFAULT_LOG_BYTES = 1024 * 1024;

const positiveInt = (v: number | undefined, what: string): void => {
  if (v !== undefined && (!Number.isSafeInteger(v) || v < 1))
    throw invalid(`${what} must be a whole number ≥ 1 (got ${v})`, `give ${what} as 1, 2, 3, …`);
};

/** The request as one scan query (same for both streams); refuses contradictory or malformed asks. */
export function logQuery(req: LogsRequest, budget: number): LogQuery {
  positiveInt(req.head, "the number of first lines");
  positiveInt(req.tail_lines, "the number of last lines");
  positiveInt(req.from_line, "the first line of the range");
  positiveInt(req.to_line, "the last line of the range");
  if (req.head !== undefined && req.tail_lines !== undefined)
    throw invalid("asked for both the first and the last lines", "ask for one of them");
  if (req.from_line !== undefined && req.to_line !== undefined && req.to_line < req.from_line)
    throw invalid(
      `the line range ${req.from_line}–${req.to_line} ends before it starts`,
      "give the smaller line number first",
    );
  const forward = req.head !== undefined || (req.from_line !== undefined && req.tail_lines === undefined);
  return {
    pattern: req.grep === undefined ? null : pattern(req.grep, req.ignore_case === true),
    from: req.from_line ?? 1,
    to: req.to_line ?? null,
    limit: req.head ?? req.tail_lines ?? null,
    forward,
    budget,
  };
}

/** The grep pattern, checked as written (errors quote it so), then folded when case is ignored. */
function pattern(grep: string, ignoreCase: boolean): LogPattern {
  const checked = compileLogPattern(grep);
  return ignoreCase ? compileLogPattern(foldCase(grep)) : checked;
}

export async function readLogs(svc: ServiceCore, req: LogsRequest): Promise<LogsResponse> {
  const budget = req.max_bytes ?? DEFAULT_LOG_BYTES;
  const q = logQuery(req, budget);
  const job = await svc.refresh(req.job_id);
  const backend = svc.backendFor(job);
  const redactor = new Redactor(Object.values(await backend.secretValues(job)));
  const asked: Stream[] = req.stream === "both" || !req.stream ? ["stdout", "stderr"] : [req.stream];
  const out: LogsResponse = {
    job_id: job.job_id,
    job_state: job.state,
    stdout_bytes: 0,
    stderr_bytes: 0,
    dropped_bytes: { stdout: 0, stderr: 0 },
    truncated: false,
  };
  const scans = new Map<Stream, { scan: LogScan; shaped: ReturnType<typeof shapeLines> }>();
  for (const s of ["stdout", "stderr"] as const) {
    if (asked.includes(s)) {
      const scan = await backend.scanLog(job, s, q);
      scans.set(s, { scan, shaped: shapeLines(scan, q, redactor) });
      out[`${s}_bytes`] = scan.totalBytes;
      out.dropped_bytes[s] = scan.droppedBytes;
    } else {
      const t = await backend.readTail(job, s, 0);
      out[`${s}_bytes`] = t.totalBytes;
      out.dropped_bytes[s] = t.droppedBytes;
    }
  }
  const o = scans.get("stdout");
  const e = scans.get("stderr");
  const share = splitBudget(o ? shownBytes(o.shaped) : 0, e ? shownBytes(e.shaped) : 0, budget);
  for (const [s, r] of scans) {
    const { text, ...page } = toPage(
      r.scan,
      q,
      r.shaped,
      s === "stdout" ? share.stdoutBytes : share.stderrBytes,
    );
    out[s] = text;
    out[`${s}_page`] = page;
    out.truncated ||= page.left_out !== "";
  }
  return out;
}
