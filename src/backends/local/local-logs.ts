// Reads a job's capped logs on this machine through the wrapper protocol's layout: the tail, or a streamed scan.
import { closeSync, openSync, readSync } from "node:fs";
import type { LogTail, Stream } from "../../core/backend/backend.ts";
import { gapMarker, type LogQuery, type LogScan } from "../../core/logs/log-query.ts";
import { type RetainedLog, scanRetained, type TextSource } from "../../core/logs/retained-scan.ts";
import { logLayout, readLogTail } from "../../wrapper/protocol.ts";

export function readLocalTail(dir: string, stream: Stream, maxBytes: number): LogTail {
  const layout = logLayout(dir, stream);
  const bytes = readLogTail(dir, stream, maxBytes);
  return { bytes, totalBytes: Math.max(layout.totalBytes, bytes.length), droppedBytes: layout.droppedBytes };
}

interface Segment {
  start: number;
  size: number;
  fd?: number;
  bytes?: Uint8Array;
}

/** The retained log as one text (head, gap marker when bytes were omitted, prev, live) read from open files. */
function openRetained(dir: string, stream: Stream): { log: RetainedLog; close: () => void } {
  const layout = logLayout(dir, stream);
  const segs: Segment[] = [];
  let size = 0;
  let gap: RetainedLog["gap"] = null;
  const file = (path: string, n: number) => {
    if (n <= 0) return;
    try {
      segs.push({ start: size, size: n, fd: openSync(path, "r") });
      size += n;
    } catch {}
  };
  const text = (bytes: Uint8Array) => {
    segs.push({ start: size, size: bytes.length, bytes });
    size += bytes.length;
  };
  if (layout.droppedBytes > 0) {
    file(layout.headPath, layout.headBytes);
    if (layout.omittedBytes > 0) {
      text(Buffer.from("\n"));
      gap = { offset: size, bytes: layout.omittedBytes };
      text(Buffer.from(`${gapMarker(layout.omittedBytes)}\n`));
    }
  }
  file(layout.prevPath, layout.prevBytes);
  file(layout.livePath, layout.liveBytes);
  const source: TextSource = {
    size,
    read(pos, buf, len) {
      let got = 0;
      for (const s of segs) {
        if (got >= len) break;
        const at = pos + got;
        if (at >= s.start + s.size || at < s.start) continue;
        const want = Math.min(len - got, s.start + s.size - at);
        let n: number;
        if (s.bytes) {
          buf.set(s.bytes.subarray(at - s.start, at - s.start + want), got);
          n = want;
        } else n = readSync(s.fd as number, buf, got, want, at - s.start);
        got += n;
        // A file cut short while it was read (the job's log rotated): stop here rather than misplace bytes.
        if (n < want) break;
      }
      return got;
    },
  };
  return {
    log: { source, totalBytes: layout.totalBytes, droppedBytes: layout.droppedBytes, gap },
    close: () => {
      for (const s of segs) if (s.fd !== undefined) closeSync(s.fd);
    },
  };
}

/** Scans a job's stream on this machine for `q`, streaming its files. */
export function scanLocalLog(dir: string, stream: Stream, q: LogQuery): LogScan {
  const { log, close } = openRetained(dir, stream);
  try {
    return scanRetained(log, q);
  } finally {
    close();
  }
}

/** Scans one plain log file (no cap layout: an Awaitless 0.8 job's stdout.log) opened by the caller, who closes it; none: empty. */
export function scanOpenFile(file: { fd: number; size: number } | null, q: LogQuery): LogScan {
  const size = file?.size ?? 0;
  const source: TextSource = {
    size,
    read: (pos, buf, len) => (file === null ? 0 : readSync(file.fd, buf, 0, Math.min(len, size - pos), pos)),
  };
  return scanRetained({ source, totalBytes: size, droppedBytes: 0, gap: null }, q);
}
