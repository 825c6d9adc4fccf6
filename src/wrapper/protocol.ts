// The TypeScript side of the wrapper's on-disk protocol: file names, spec rendering, record parsers and readers for
// a local job directory (the embedded scripts themselves: scripts.ts). The protocol itself is documented atop wrapper.sh and
// in docs/wrapper-protocol.md.

import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { type LogPlan, type LogStream, logFileNames, planLog } from "./log-layout.ts";
import {
  type ExitRecord,
  type HeartbeatRecord,
  parseExitRecord,
  parseHeartbeat,
  parseStarted,
  type StartedRecord,
} from "./records.ts";
import { replaceFile } from "./safe-files.ts";

export { type LogPlan, type LogSizes, type LogStream, logFileNames, planLog } from "./log-layout.ts";
export { parseQueued, type QueuedRecord, readQueued } from "./queue-records.ts";
export * from "./records.ts";
export {
  MIN_LOG_CAP_BYTES,
  QUEUE_NAME_RE,
  RESOURCE_RE,
  renderSpec,
  SPEC_DEFAULTS,
  type SpecAdmission,
  type SpecInput,
  shellQuote,
} from "./spec-render.ts";

/** Names of the files in a job directory. */
export const FILES = {
  spec: "spec.sh",
  started: "started",
  heartbeat: "heartbeat",
  exit: "exit",
  stdout: "stdout",
  stderr: "stderr",
  progress: "progress",
  cancel: "cancel",
  queued: "queued",
  timedOutMarker: "timed_out",
  cancelledMarker: "cancelled",
  wrapperLog: "wrapper.log",
  leftovers: "leftovers",
} as const;

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

function readRecord<T>(dir: string, name: string, parse: (text: string) => T | null): T | null {
  const text = readText(join(dir, name));
  return text === null ? null : parse(text);
}

/** The started record, or null before the command started (or if the file is incomplete). */
export function readStarted(dir: string): StartedRecord | null {
  return readRecord(dir, FILES.started, parseStarted);
}

export function readHeartbeat(dir: string): HeartbeatRecord | null {
  return readRecord(dir, FILES.heartbeat, parseHeartbeat);
}

/** The exit record, or null while the job has not finished. */
export function readExitRecord(dir: string): ExitRecord | null {
  return readRecord(dir, FILES.exit, parseExitRecord);
}

/** The `leftovers` file's text (the processes the command left running), or null when there is none. */
export function readLeftovers(dir: string): string | null {
  return readText(join(dir, FILES.leftovers));
}

/**
 * The exit record's reservation (`exit.tmp`): written by the launcher with spec.sh (the wrapper writes it itself when
 * it is missing), so the wrapper writes its record over bytes already allocated even when output filled the disk.
 */
export const EXIT_RESERVATION = { name: "exit.tmp", text: `${" ".repeat(511)}\n` } as const;

/** Ask the wrapper to stop the job: TERM to its group now, KILL after `graceSeconds`. Written atomically. */
export function writeCancelRequest(dir: string, graceSeconds: number): void {
  const path = join(dir, FILES.cancel);
  replaceFile(path, `${Math.max(0, Math.floor(graceSeconds))}\n`, 0o600);
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Paths and sizes a reader needs to rebuild one stream of a local job (see planLog for the order). */
export interface LogLayout extends LogPlan {
  stream: LogStream;
  livePath: string;
  prevPath: string;
  headPath: string;
}

export function logLayout(dir: string, stream: LogStream): LogLayout {
  const names = logFileNames(stream);
  const dropped = Number.parseInt(readText(join(dir, names.dropped)) ?? "0", 10);
  const plan = planLog({
    headFileBytes: sizeOf(join(dir, names.head)),
    prevBytes: sizeOf(join(dir, names.prev)),
    liveBytes: sizeOf(join(dir, names.live)),
    droppedBytes: Number.isFinite(dropped) ? dropped : 0,
  });
  return {
    ...plan,
    stream,
    livePath: join(dir, names.live),
    prevPath: join(dir, names.prev),
    headPath: join(dir, names.head),
  };
}

function readRange(path: string, fromEnd: number): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return new Uint8Array(0);
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, fromEnd);
    const buffer = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, buffer, done, length - done, size - length + done);
      if (n === 0) break;
      done += n;
    }
    return buffer.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `maxBytes` of a stream (the end of prev + live). While the job runs a rotation may happen between
 * the two reads; after the exit record exists the files no longer change (unless descendants still write).
 */
export function readLogTail(dir: string, stream: LogStream, maxBytes: number): Uint8Array {
  const names = logFileNames(stream);
  const live = readRange(join(dir, names.live), maxBytes);
  if (live.length >= maxBytes) return live;
  const prev = readRange(join(dir, names.prev), maxBytes - live.length);
  const tail = new Uint8Array(prev.length + live.length);
  tail.set(prev);
  tail.set(live, prev.length);
  return tail;
}
