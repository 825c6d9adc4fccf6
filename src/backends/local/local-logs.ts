// Reads a job's capped logs on this machine through the wrapper protocol's layout (head, gap, prev, live).
import { closeSync, openSync, readSync } from "node:fs";
import type { FullLog, LogTail, Stream } from "../../core/backend.ts";
import { logLayout, readLogTail } from "../../wrapper/protocol.ts";

export function readLocalTail(dir: string, stream: Stream, maxBytes: number): LogTail {
  const layout = logLayout(dir, stream);
  const bytes = readLogTail(dir, stream, maxBytes);
  return { bytes, totalBytes: Math.max(layout.totalBytes, bytes.length), droppedBytes: layout.droppedBytes };
}

function readHead(path: string, n: number): Uint8Array {
  if (n <= 0) return new Uint8Array(0);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return new Uint8Array(0);
  }
  try {
    const buf = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = readSync(fd, buf, got, n - got, got);
      if (r <= 0) break;
      got += r;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** The retained log: when bytes were dropped, the head, a marker naming how many, then the tail. */
export function readLocalLog(dir: string, stream: Stream, maxBytes: number): FullLog {
  const layout = logLayout(dir, stream);
  const tail = readLogTail(dir, stream, maxBytes);
  const inTail = layout.prevBytes + layout.liveBytes;
  if (layout.droppedBytes === 0) {
    return { text: tail, totalBytes: layout.totalBytes, droppedBytes: 0, truncated: tail.length < inTail };
  }
  const head = readHead(layout.headPath, Math.min(layout.headBytes, maxBytes));
  const omitted = layout.omittedBytes + (inTail - tail.length) + (layout.headBytes - head.length);
  const marker = Buffer.from(`\n[… ${omitted} bytes dropped by the log cap …]\n`);
  return {
    text: Buffer.concat([head, marker, tail]),
    totalBytes: layout.totalBytes,
    droppedBytes: layout.droppedBytes,
    truncated: true,
  };
}
