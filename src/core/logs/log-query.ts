// One read path for job logs: the query every backend answers (grep, line range, head, tail, byte budget), what a
// scan hands back (candidate lines with their numbers), and how candidates become the returned, redacted page.

import type { LogPage } from "../model/service-api.ts";
import { REDACTION_MARGIN_BYTES, type Redactor } from "../util/redact.ts";
import { cleanText, decodeUtf8, utf8Length } from "../util/text.ts";
import type { LogPattern } from "./pattern.ts";

/**
 * What to read of one stream. Lines are numbered from 1 in the retained log. Forward: the first selected lines from
 * `from`; backward: the last selected lines up to `to`. Selected: every line of [from, to], or the matching ones.
 */
export interface LogQuery {
  pattern: LogPattern | null;
  from: number;
  to: number | null;
  /** Most lines (or matches) to return; null: as many as the budget holds. */
  limit: number | null;
  forward: boolean;
  /** Bytes of returned text for the stream. */
  budget: number;
}

/** Raw bytes a scan keeps of one line: the budget plus a margin, so that redaction at the cut sees whole secrets. */
export const lineKeepBytes = (q: LogQuery): number => q.budget + REDACTION_MARGIN_BYTES;

export interface ScanLine {
  /** Line number in the retained log. */
  n: number;
  /** The line's bytes without its newline, at most lineKeepBytes (its start, or with cutStart its end). */
  raw: Uint8Array;
  /** The line is longer than `raw`. */
  cut: boolean;
  /** `raw` is the end of the line (a backward read that starts inside it). */
  cutStart?: boolean;
  /** With a pattern: the line lies inside a private key block (its body is redacted whole). */
  key?: boolean;
}

/** Where the log cap removed the middle of the stream: a marker line stands for the dropped bytes. */
export interface LogGap {
  /** The marker's line number; lines after it are counted from it, not from the stream's start. */
  line: number;
  bytes: number;
}

/** What a backend's scan of one stream found. */
export interface LogScan {
  lines: ScanLine[];
  /** With a pattern: the matching lines in [from, to] (the whole retained log by default). */
  matchesTotal: number | null;
  /** Lines of the retained log (up to `to`), when the scan counted them. */
  linesTotal: number | null;
  /** Forward: the number of the first selected line after the returned ones (null: none). */
  nextLine: number | null;
  /** Every byte the command wrote to the stream, dropped ones included. */
  totalBytes: number;
  droppedBytes: number;
  gap: LogGap | null;
}

/** The scan of a stream that does not exist yet. */
export const emptyScan = (q: LogQuery): LogScan => ({
  lines: [],
  matchesTotal: q.pattern ? 0 : null,
  linesTotal: 0,
  nextLine: null,
  totalBytes: 0,
  droppedBytes: 0,
  gap: null,
});

/** The marker line a reader sees where the log cap dropped bytes (the same text local and remote). */
export const gapMarker = (bytes: number): string => `[… ${bytes} bytes dropped by the log cap …]`;

/** The cost the scans use to pick candidates (raw bytes, each capped at the budget, plus a newline). */
export const candidateCost = (len: number, budget: number): number => Math.min(len, budget) + 1;

/** Keeps the candidates a page can use: forward, the first ones; backward, the last ones, within limit and budget. */
export function pickCandidates<T extends { raw: Uint8Array }>(lines: T[], q: LogQuery): T[] {
  const limit = q.limit ?? Number.POSITIVE_INFINITY;
  const out: T[] = [];
  let used = 0;
  const order = q.forward ? lines : [...lines].reverse();
  for (const l of order) {
    if (out.length >= limit || used >= q.budget) break;
    out.push(l);
    used += candidateCost(l.raw.length, q.budget);
  }
  return q.forward ? out : out.reverse();
}

interface Shown {
  n: number;
  text: string;
  cut: boolean;
}

const PEM_BODY = /^(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z-]*: .*)$/;

/** Cleans and redacts each candidate line whole, before any cut; key-block bodies become [REDACTED]. */
export function shapeLines(scan: LogScan, q: LogQuery, redactor: Redactor): Shown[] {
  // The log cap's head ends, and its rolling tail starts, mid-stream: the lines either side of the gap marker.
  const gap = scan.gap?.line ?? -2;
  const lines = scan.lines.map((l) => {
    const edges = {
      endsMidStream: (l.cut && !l.cutStart) || l.n === gap - 1,
      startsMidStream: l.cutStart === true || l.n === gap + 1,
    };
    // Secrets are matched before cleaning (as given) and after it (as cleaned).
    let text = cleanText(redactor.redact(decodeUtf8(l.raw), edges));
    if (l.key && PEM_BODY.test(text)) text = "[REDACTED]";
    text = redactor.redact(text, edges);
    return { n: l.n, text: q.pattern ? `${l.n}:${text}` : text, cut: l.cut };
  });
  if (!q.pattern) redactKeyBlocks(lines);
  return lines;
}

/** Plain (contiguous) reads: base64 lines inside a BEGIN … PRIVATE KEY … END block in view are redacted. */
function redactKeyBlocks(lines: Shown[]): void {
  const marker = /-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;
  let inKey = false;
  let pending: Shown[] = [];
  for (const l of lines) {
    const m = marker.exec(l.text);
    if (m) {
      if (m[1] === "END") for (const p of pending) p.text = "[REDACTED]";
      pending = [];
      inKey = m[1] === "BEGIN";
      continue;
    }
    if (!PEM_BODY.test(l.text)) {
      inKey = false;
      pending = [];
    } else if (inKey) l.text = "[REDACTED]";
    else pending.push(l);
  }
}

/** Bytes of `text` that fit `max` UTF-8 bytes, cut at a character boundary and marked with … */
function cutText(text: string, max: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let end = Math.max(0, max - 3);
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}…`;
}

/** Sizes of the shaped lines (for sharing one budget between streams). */
export const shownBytes = (lines: Shown[]): number => lines.reduce((s, l) => s + utf8Length(l.text) + 1, 0);

/** The page of `lines` (shaped) within `budget` bytes, with cursors and a sentence on what was left out. */
export function toPage(scan: LogScan, q: LogQuery, shaped: Shown[], budget: number): LogPage {
  const kept: Shown[] = [];
  let used = 0;
  let cutLines = 0;
  const order = q.forward ? shaped : [...shaped].reverse();
  for (const l of order) {
    const size = utf8Length(l.text) + 1;
    if (used + size > budget) {
      // The first line alone is over the budget: show its start rather than nothing.
      if (kept.length === 0 && budget > 4) {
        kept.push({ ...l, text: cutText(l.text, budget - 1), cut: true });
        used = budget;
      }
      break;
    }
    kept.push(l);
    used += size;
  }
  if (!q.forward) kept.reverse();
  for (const l of kept) if (l.cut) cutLines++;
  const first = kept[0]?.n ?? null;
  const last = kept[kept.length - 1]?.n ?? null;
  const page: LogPage = {
    text: kept.map((l) => `${l.text}\n`).join(""),
    lines: kept.length,
    first_line: first,
    last_line: last,
    left_out: "",
  };
  if (scan.linesTotal !== null) page.lines_total = scan.linesTotal;
  if (scan.matchesTotal !== null) page.matches_total = scan.matchesTotal;
  const selectedBefore = beforeExists(scan, q, first, kept.length);
  const nextFrom = q.forward ? nextAfter(scan, shaped, kept) : null;
  if (nextFrom !== null) page.next_from_line = nextFrom;
  if (selectedBefore && first !== null && first > 1) page.next_to_line = first - 1;
  if (cutLines > 0) page.cut_lines = cutLines;
  if (scan.gap) page.dropped_middle = { after_line: scan.gap.line - 1, bytes: scan.gap.bytes };
  page.left_out = leftOut(scan, q, page);
  return page;
}

/** Backward: do selected lines exist before the first returned one? */
function beforeExists(scan: LogScan, q: LogQuery, first: number | null, kept: number): boolean {
  if (q.forward || first === null) return false;
  if (scan.matchesTotal !== null) return scan.matchesTotal > kept;
  return first > q.from;
}

/** Forward: the first selected line after the returned ones. */
function nextAfter(scan: LogScan, shaped: Shown[], kept: Shown[]): number | null {
  const more = shaped[kept.length];
  if (more) return more.n;
  return scan.nextLine;
}

function leftOut(scan: LogScan, q: LogQuery, p: LogPage): string {
  const parts: string[] = [];
  if (q.pattern && p.matches_total !== undefined && p.matches_total > p.lines)
    parts.push(`${p.matches_total - p.lines} more matching line(s)`);
  if (p.next_to_line !== undefined && !q.pattern) parts.push(`lines ${q.from}–${p.next_to_line} before`);
  if (p.next_from_line !== undefined && !q.pattern) parts.push(`lines from ${p.next_from_line} on`);
  if (p.cut_lines) parts.push(`the rest of ${p.cut_lines} line(s) longer than the byte budget`);
  if (scan.gap) parts.push(`${scan.gap.bytes} bytes the log cap dropped after line ${scan.gap.line - 1}`);
  return parts.join("; ");
}
