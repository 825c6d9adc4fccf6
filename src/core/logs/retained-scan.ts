// The in-process scan of a retained log (streamed in chunks, memory bounded by the budget): grep with line numbers,
// line ranges forward, the last lines backward. Remote hosts run the same query as a sh/grep/awk program.
import {
  candidateCost,
  type LogGap,
  type LogQuery,
  type LogScan,
  lineKeepBytes,
  pickCandidates,
  type ScanLine,
} from "./log-query.ts";

/** Random access to the retained log's bytes (head, gap marker, rolling tail as one text). */
export interface TextSource {
  readonly size: number;
  /** Reads up to `len` bytes at `pos` into `buf` from 0; returns how many. */
  read(pos: number, buf: Buffer, len: number): number;
}

export interface RetainedLog {
  source: TextSource;
  totalBytes: number;
  droppedBytes: number;
  /** The gap marker's byte offset in `source` and the bytes it stands for. */
  gap: { offset: number; bytes: number } | null;
}

const CHUNK = 1 << 20;
/** Bytes of whole lines a regex sees at once (from a candidate line on). */
const WINDOW = 64 << 10;
const NL = 10;
const PEM_MARKER = /-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/;
const MAX_MARKERS = 100_000;

function countNewlines(buf: Buffer, start: number, end: number): number {
  let c = 0;
  let p = start;
  for (;;) {
    const i = buf.indexOf(NL, p);
    if (i < 0 || i >= end) return c;
    c++;
    p = i + 1;
  }
}

/** Streams [from, to) of the source in chunks ending on a line boundary where one exists. */
function* chunks(
  src: TextSource,
  from = 0,
  to = src.size,
): Generator<{ pos: number; buf: Buffer; end: number }> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = from;
  while (pos < to) {
    const n = src.read(pos, buf, Math.min(CHUNK, to - pos));
    if (n <= 0) return;
    let end = n;
    if (pos + n < to) {
      const nl = buf.lastIndexOf(NL, n - 1);
      if (nl >= 0) end = nl + 1;
    }
    yield { pos, buf, end };
    pos += end;
  }
}

/** Line numbers at ascending byte offsets (each the start of a line), counted in one pass from the start. */
function lineNumbersAt(src: TextSource, offsets: number[]): Map<number, number> {
  const out = new Map<number, number>();
  const sorted = [...new Set(offsets)].sort((a, b) => a - b);
  if (sorted.length === 0) return out;
  let k = 0;
  let line = 1;
  const last = sorted[sorted.length - 1] as number;
  for (const c of chunks(src, 0, last + 1)) {
    let p = 0;
    while (k < sorted.length && (sorted[k] as number) < c.pos + c.end) {
      const at = (sorted[k] as number) - c.pos;
      line += countNewlines(c.buf, p, at);
      p = at;
      out.set(sorted[k] as number, line);
      k++;
    }
    line += countNewlines(c.buf, p, c.end);
  }
  for (; k < sorted.length; k++) out.set(sorted[k] as number, line);
  return out;
}

/** The line starting at `off`: its first `keep` bytes, whether it is longer, and where the next line starts. */
function lineAt(src: TextSource, off: number, keep: number): { raw: Uint8Array; cut: boolean; next: number } {
  let raw: Uint8Array | null = null;
  for (const c of chunks(src, off)) {
    const nl = c.buf.indexOf(NL);
    const len = nl >= 0 && nl < c.end ? nl : c.end;
    raw ??= Uint8Array.from(c.buf.subarray(0, Math.min(len, keep)));
    if (nl >= 0 && nl < c.end) {
      const total = c.pos + nl - off;
      return { raw, cut: total > keep, next: c.pos + nl + 1 };
    }
  }
  return { raw: raw ?? new Uint8Array(0), cut: src.size - off > keep, next: src.size };
}

/** Counts lines until line `n` starts; returns its offset (the source's size when the text has fewer lines). */
function offsetOfLine(src: TextSource, n: number): { off: number; lines: number } {
  if (n <= 1) return { off: 0, lines: 0 };
  let line = 1;
  for (const c of chunks(src)) {
    let p = 0;
    for (;;) {
      const i = c.buf.indexOf(NL, p);
      if (i < 0 || i >= c.end) break;
      line++;
      p = i + 1;
      if (line === n) return { off: c.pos + p, lines: n - 1 };
    }
  }
  return { off: src.size, lines: line - 1 + (src.size > 0 && !endsWithNewline(src) ? 1 : 0) };
}

function endsWithNewline(src: TextSource): boolean {
  if (src.size === 0) return false;
  const b = Buffer.allocUnsafe(1);
  return src.read(src.size - 1, b, 1) === 1 && b[0] === NL;
}

function lineCount(src: TextSource, end = src.size): number {
  let n = 0;
  for (const c of chunks(src, 0, end)) n += countNewlines(c.buf, 0, c.end);
  if (end > 0) {
    const b = Buffer.allocUnsafe(1);
    if (src.read(end - 1, b, 1) === 1 && b[0] !== NL) n++;
  }
  return n;
}

/** Scans one retained log for `q`. */
export function scanRetained(log: RetainedLog, q: LogQuery): LogScan {
  const base = {
    totalBytes: log.totalBytes,
    droppedBytes: log.droppedBytes,
    gap: gapLine(log),
  };
  if (q.pattern) return { ...base, ...grepScan(log, q) };
  return { ...base, ...(q.forward ? forwardScan(log.source, q) : backwardScan(log.source, q)) };
}

function gapLine(log: RetainedLog): LogGap | null {
  if (!log.gap) return null;
  const line = lineNumbersAt(log.source, [log.gap.offset]).get(log.gap.offset) ?? 1;
  return { line, bytes: log.gap.bytes };
}

type Part = Pick<LogScan, "lines" | "matchesTotal" | "linesTotal" | "nextLine">;

function forwardScan(src: TextSource, q: LogQuery): Part {
  const keep = lineKeepBytes(q);
  let { off, lines } = offsetOfLine(src, q.from);
  if (off >= src.size)
    return { lines: [], matchesTotal: null, linesTotal: q.from > 1 ? null : lines, nextLine: null };
  const out: ScanLine[] = [];
  let n = q.from;
  let used = 0;
  const limit = q.limit ?? Number.POSITIVE_INFINITY;
  while (off < src.size && (q.to === null || n <= q.to)) {
    if (out.length >= limit || used >= q.budget)
      return { lines: out, matchesTotal: null, linesTotal: null, nextLine: n };
    const l = lineAt(src, off, keep);
    out.push({ n, raw: l.raw, cut: l.cut });
    used += candidateCost(l.raw.length, q.budget);
    off = l.next;
    n++;
  }
  return { lines: out, matchesTotal: null, linesTotal: off >= src.size ? n - 1 : null, nextLine: null };
}

function backwardScan(src: TextSource, q: LogQuery): Part {
  let end = src.size;
  let last: number;
  let total: number | null;
  if (q.to !== null) {
    const after = offsetOfLine(src, q.to + 1);
    end = after.off;
    last = after.off >= src.size ? after.lines : q.to;
    total = after.off >= src.size ? after.lines : null;
  } else {
    last = lineCount(src);
    total = last;
  }
  const want = lineKeepBytes(q) + 1;
  const start = Math.max(0, end - want);
  const buf = Buffer.allocUnsafe(end - start);
  let got = 0;
  while (got < buf.length) {
    const n = src.read(start + got, buf.subarray(got), buf.length - got);
    if (n <= 0) break;
    got += n;
  }
  return {
    lines: pickCandidates(windowLines(buf.subarray(0, got), end < want, last, q), q),
    matchesTotal: null,
    linesTotal: total,
    nextLine: null,
  };
}

/**
 * The lines of a window of bytes that ends where line `last` ends. Unless `complete` (the window starts at the
 * log's start), its first byte is the one before the window proper and tells whether the window starts a line.
 */
export function windowLines(bytes: Uint8Array, complete: boolean, last: number, q: LogQuery): ScanLine[] {
  const keep = lineKeepBytes(q);
  let b = bytes;
  let startsLine = true;
  if (!complete && b.length > 0) {
    startsLine = b[0] === NL;
    b = b.subarray(1);
  }
  if (b.length > 0 && b[b.length - 1] === NL) b = b.subarray(0, b.length - 1);
  if (b.length === 0 && (last === 0 || bytes.length === 0)) return [];
  const pieces: Uint8Array[] = [];
  let p = 0;
  for (;;) {
    const i = b.indexOf(NL, p);
    if (i < 0) break;
    pieces.push(b.subarray(p, i));
    p = i + 1;
  }
  pieces.push(b.subarray(p));
  const out: ScanLine[] = [];
  pieces.forEach((piece, k) => {
    const n = last - (pieces.length - 1 - k);
    if (n < q.from || n < 1) return;
    const cutStart = k === 0 && !startsLine;
    const long = piece.length > keep;
    const raw = long ? (cutStart ? piece.subarray(piece.length - keep) : piece.subarray(0, keep)) : piece;
    out.push({ n, raw: Uint8Array.from(raw), cut: cutStart || long, ...(cutStart ? { cutStart } : {}) });
  });
  return out;
}

interface Hit {
  off: number;
  /** Line length in bytes; -1 when the line runs past the chunk it was found in. */
  len: number;
  n: number;
}

function grepScan(log: RetainedLog, q: LogQuery): Part {
  const src = log.source;
  const pattern = q.pattern!;
  const eager = q.from > 1 || q.to !== null;
  const limit = q.limit ?? Number.POSITIVE_INFINITY;
  const kept: Hit[] = [];
  let keptHead = 0;
  let used = 0;
  let next = null as Hit | null;
  let total = 0;
  const markers: { off: number; type: string }[] = [];
  let line = 1;
  let longStart = -1;
  let lastOff = -1;
  const add = (h: Hit) => {
    if (h.off === lastOff) return;
    lastOff = h.off;
    if (eager && ((q.to !== null && h.n > q.to) || h.n < q.from)) return;
    total++;
    const cost = h.len < 0 ? q.budget + 1 : candidateCost(h.len, q.budget);
    if (q.forward) {
      if (kept.length < limit && used < q.budget) {
        kept.push(h);
        used += cost;
      } else next ??= h;
      return;
    }
    kept.push(h);
    used += cost;
    for (;;) {
      const oldest = kept[keptHead] as Hit;
      const live = kept.length - keptHead;
      const oldCost = oldest.len < 0 ? q.budget + 1 : candidateCost(oldest.len, q.budget);
      if (live > limit || (live > 1 && used - oldCost >= q.budget)) {
        used -= oldCost;
        keptHead++;
      } else break;
    }
    if (keptHead > 4096 && keptHead * 2 > kept.length) {
      kept.splice(0, keptHead);
      keptHead = 0;
    }
  };
  for (const c of chunks(src)) {
    const { buf, end, pos } = c;
    const midLine = longStart >= 0;
    let counted = 0;
    const lineStart = (m: number): number => {
      const i = m > 0 ? buf.lastIndexOf(NL, m - 1) : -1;
      return i >= 0 ? i + 1 : midLine ? longStart - pos : 0;
    };
    const lineOf = (start: number): number => {
      if (!eager) return 0;
      if (start < 0) return line;
      line += countNewlines(buf, counted, start);
      counted = start;
      return line;
    };
    const visit = (m: number, record: (start: number, len: number) => void): number => {
      const start = lineStart(m);
      const nl = buf.indexOf(NL, m);
      const stop = nl >= 0 && nl < end ? nl : end;
      record(start, nl >= 0 && nl < end && start >= 0 ? nl - start : -1);
      return stop + 1;
    };
    // Markers of private key blocks, so that a matching line inside one is redacted whole.
    for (let p = 0; ; ) {
      const m = buf.indexOf("PRIVATE KEY", p, "latin1");
      if (m < 0 || m >= end) break;
      p = visit(m, (start, len) => {
        const text = buf.toString("latin1", Math.max(0, start), len < 0 ? end : start + len);
        const mk = PEM_MARKER.exec(text);
        if (mk && markers.length < MAX_MARKERS) markers.push({ off: pos + start, type: mk[1] as string });
      });
    }
    const record = (start: number, len: number) => add({ off: pos + start, len, n: lineOf(start) });
    if (pattern.literal !== null) {
      for (let p = 0; ; ) {
        const m = buf.indexOf(pattern.literal, p, "latin1");
        if (m < 0 || m >= end || (q.to !== null && eager && line > q.to)) break;
        p = visit(m, record);
      }
    } else if (pattern.required !== null) {
      // The regex runs only from lines holding the bytes every match needs, over windows of whole lines (small
      // strings, quickly collected), and jumps to its next match.
      const re = pattern.regex;
      let wStart = 0;
      let wEnd = 0;
      let text = "";
      for (let p = 0; ; ) {
        const m = buf.indexOf(pattern.required, p, "latin1");
        if (m < 0 || m >= end || (q.to !== null && eager && line > q.to)) break;
        const s0 = Math.max(0, lineStart(m));
        if (s0 >= wEnd) {
          wStart = s0;
          const lim = Math.min(end, s0 + WINDOW);
          const cut = lim < end ? buf.lastIndexOf(NL, lim - 1) + 1 : end;
          const nl = buf.indexOf(NL, s0);
          wEnd = cut > s0 ? cut : nl >= 0 && nl < end ? nl + 1 : end;
          text = buf.toString("latin1", wStart, wEnd);
        }
        re.lastIndex = s0 - wStart;
        const r = re.exec(text);
        if (!r) {
          p = wEnd;
          continue;
        }
        const at = r.index + wStart;
        const nl = buf.indexOf(NL, m);
        const stop = nl >= 0 && nl < end ? nl : end;
        p = at <= stop ? visit(m, record) : Math.max(stop + 1, lineStart(at));
        if (p >= end) break;
      }
    } else {
      const text = buf.toString("latin1", 0, end);
      const re = pattern.regex;
      re.lastIndex = 0;
      for (;;) {
        const m = re.exec(text);
        if (!m) break;
        const p = visit(m.index, record);
        re.lastIndex = p;
        if (p >= end) break;
      }
    }
    if (eager) line += countNewlines(buf, counted, end);
    const lastNl = buf.lastIndexOf(NL, end - 1);
    longStart = lastNl === end - 1 ? -1 : lastNl >= 0 ? pos + lastNl + 1 : midLine ? longStart : pos;
    if (eager && q.to !== null && line > q.to) break;
  }
  const hits = kept.slice(keptHead);
  if (!eager) {
    const lines = lineNumbersAt(
      src,
      [...hits, ...(next ? [next] : [])].map((h) => h.off),
    );
    for (const h of hits) h.n = lines.get(h.off) ?? 0;
    if (next) next.n = lines.get(next.off) ?? 0;
  }
  const keep = lineKeepBytes(q);
  const gapOff = log.gap?.offset ?? -1;
  const lines: ScanLine[] = hits.map((h) => {
    const l = lineAt(src, h.off, keep);
    return { n: h.n, raw: l.raw, cut: l.cut, key: inKey(markers, h.off, gapOff) };
  });
  return { lines, matchesTotal: total, linesTotal: null, nextLine: next ? next.n : null };
}

/** A line lies inside a key block: the last marker before it is a BEGIN, or (none since the gap) the next is an END. */
export function inKey(markers: { off: number; type: string }[], off: number, gapOff: number): boolean {
  let before: { off: number; type: string } | undefined;
  let after: { off: number; type: string } | undefined;
  for (const m of markers) {
    if (m.off === off) return false;
    if (m.off < off) before = m;
    else {
      after = m;
      break;
    }
  }
  if (before && !(gapOff >= 0 && before.off < gapOff && off > gapOff)) return before.type === "BEGIN";
  return gapOff >= 0 && off > gapOff && after?.type === "END";
}
