// The parser of log-scan.sh's answer (src/wrapper/host/log-scan.sh documents the format): the same LogScan the
// in-process scanner gives.

import {
  type LogQuery,
  type LogScan,
  lineKeepBytes,
  pickCandidates,
  type ScanLine,
} from "../../core/logs/log-query.ts";
import { windowLines } from "../../core/logs/retained-scan.ts";
import { invalid } from "../../core/model/errors.ts";

/** Lines from a `N FLAGS:TEXT` record list; returns them and the trailer's fields. */
function parseRecords(body: Buffer): { lines: ScanLine[]; trailer: string[]; grepFailed: boolean } {
  const lines: ScanLine[] = [];
  let trailer: string[] = [];
  let grepFailed = false;
  let p = 0;
  while (p < body.length) {
    let nl = body.indexOf(10, p);
    if (nl < 0) nl = body.length;
    const rec = body.subarray(p, nl);
    p = nl + 1;
    if (rec[0] === 0x40) {
      const s = rec.toString("latin1");
      if (s === "@@grep-failed") grepFailed = true;
      else trailer = s.split(" ").slice(1);
      continue;
    }
    const sp = rec.indexOf(0x20);
    const n = Number(rec.subarray(0, sp).toString("latin1"));
    const flags = rec.subarray(sp + 1, sp + 3).toString("latin1");
    const raw = Uint8Array.from(rec.subarray(sp + 4));
    lines.push({ n, raw, cut: flags[0] === "c", ...(flags[1] === "k" ? { key: true } : {}) });
  }
  return { lines, trailer, grepFailed };
}

/** The program's answer for `q` as a LogScan; throws on an answer that does not parse. */
export function parseLogScan(
  stdout: Buffer,
  stderr: string,
  q: LogQuery,
  fail: (why: string) => Error,
): LogScan {
  const nl = stdout.indexOf(10);
  const sizes = (nl < 0 ? "" : stdout.subarray(0, nl).toString()).split(" ").map(Number);
  if (sizes.length !== 5 || sizes.some((x) => !Number.isFinite(x))) throw fail("no sizes line");
  const [, prevBytes = 0, liveBytes = 0, droppedBytes = 0, gapLine = 0] = sizes;
  const [headFileBytes = 0] = sizes;
  const headBytes = droppedBytes > 0 ? Math.min(headFileBytes, droppedBytes) : 0;
  const base = {
    totalBytes: droppedBytes + prevBytes + liveBytes,
    droppedBytes,
    gap: gapLine > 0 ? { line: gapLine, bytes: droppedBytes - headBytes } : null,
  };
  const body = stdout.subarray(nl + 1);
  if (!q.pattern && !q.forward) {
    const eol = body.indexOf(10);
    const head = body.subarray(0, Math.max(eol, 0)).toString("latin1").split(" ");
    if (head[0] !== "@" || head.length !== 3) throw fail("no line count");
    const last = Number(head[1]);
    const window = body.subarray(eol + 1);
    const lines = windowLines(window, window.length < lineKeepBytes(q) + 1, last, q);
    return {
      ...base,
      lines: pickCandidates(lines, q),
      matchesTotal: null,
      linesTotal: head[2] === "1" ? null : last,
      nextLine: null,
    };
  }
  const { lines, trailer, grepFailed } = parseRecords(body);
  if (grepFailed)
    throw invalid(
      `grep on the host failed for the pattern ${JSON.stringify(q.pattern?.source ?? "")}: ${stderr.trim().slice(0, 300)}`,
      "simplify the pattern (plain text, [...], ( | ), * + ?) and try again",
    );
  if (trailer.length !== 3) throw fail("no trailer");
  const picked = pickCandidates(lines, q);
  const dropped = q.forward && picked.length < lines.length ? (lines[picked.length] as ScanLine).n : null;
  const next = Number(trailer[1]);
  const eof = trailer[2] === "1";
  const lastSent = lines[lines.length - 1]?.n ?? q.from - 1;
  return {
    ...base,
    lines: picked,
    matchesTotal: q.pattern ? Number(trailer[0]) : null,
    linesTotal: !q.pattern && eof && !(lines.length === 0 && q.from > 1) ? lastSent : null,
    nextLine: dropped ?? (next > 0 ? next : null),
  };
}
