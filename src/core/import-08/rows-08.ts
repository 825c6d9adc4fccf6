// A row of an Awaitless 0.8 store as hostile input: every column typed and bounded (IDs by 0.8's pattern only, JSON
// of bounded size and nesting), or the reason it is skipped. Nothing here touches a file.
import { JOB_ID_08_RE } from "../model/ids.ts";

/** One row of 0.8's `jobs` table, typed (the columns import uses; JSON columns decoded). */
export interface Job08 {
  job_id: string;
  name: string | null;
  backend: string;
  host: string | null;
  command: string[];
  cwd: string | null;
  env: Record<string, string>;
  state: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  timeout_seconds: number | null;
  stall_timeout_seconds: number | null;
  pid: number | null;
  pid_start_ticks: number | null;
  runner_pid: number | null;
  runner_start_ticks: number | null;
  pgid: number | null;
  backend_id: string | null;
  job_dir: string;
  stdout_path: string;
  stderr_path: string;
  artifacts: string[];
  queue_name: string | null;
  error: string | null;
  events: Event08[];
  /** 0.8's immutable terminal result (from `completion_snapshots`), when a client had read it. */
  snapshot: Record<string, unknown> | null;
}

export interface Event08 {
  state: string;
  occurred_at: string;
  detail: string | null;
}

/** How long each text column of `jobs` may be (characters); longer values refuse the row. */
export const JOB_COLUMNS_08 = {
  job_id: 64,
  name: 200,
  backend: 16,
  host: 255,
  command_json: 1 << 20,
  cwd: 4096,
  env_json: 1 << 20,
  state: 32,
  created_at: 64,
  started_at: 64,
  finished_at: 64,
  exit_code: 32,
  timeout_seconds: 32,
  stall_timeout_seconds: 32,
  pid: 32,
  pid_start_ticks: 32,
  runner_pid: 32,
  runner_start_ticks: 32,
  pgid: 32,
  backend_id: 256,
  job_dir: 4096,
  stdout_path: 4096,
  stderr_path: 4096,
  artifacts_json: 1 << 20,
  queue_name: 256,
  error: 64 * 1024,
} as const;
export type Column08 = keyof typeof JOB_COLUMNS_08;
/** Columns without which a row is not an 0.8 job. */
export const REQUIRED_COLUMNS_08: readonly Column08[] = [
  "job_id",
  "backend",
  "command_json",
  "state",
  "created_at",
];

/** Bounds of the other tables' values. */
export const EVENTS_PER_JOB_08 = 1000;
export const EVENT_COLUMNS_08 = { state: 32, occurred_at: 64, detail: 4096 } as const;
export const SNAPSHOT_CHARS_08 = 16 << 20;
/** Deepest JSON nesting accepted anywhere (0.8 wrote at most a few levels plus an artifact's parsed content). */
export const JSON_DEPTH_08 = 64;
const MAX_ARGV = 4096;
const MAX_ENV = 1000;
const MAX_ARTIFACTS = 1000;

export class Skip08 extends Error {}

function skip(why: string): never {
  throw new Skip08(why);
}

/** Text of at most `max` code points (a cheap length test first: UTF-16 units are never fewer). */
function fits(s: string, max: number): boolean {
  if (s.length <= max) return true;
  if (s.length > 2 * max) return false;
  let n = 0;
  for (const _ of s) if (++n > max) return false;
  return true;
}

function text(row: Record<string, unknown>, col: Column08, nullable: true): string | null;
function text(row: Record<string, unknown>, col: Column08, nullable: false): string;
function text(row: Record<string, unknown>, col: Column08, nullable: boolean): string | null {
  const v = row[col];
  if (v === null || v === undefined) {
    if (nullable) return null;
    skip(`${col} is missing`);
  }
  if (typeof v !== "string") skip(`${col} is not text`);
  if (!fits(v, JOB_COLUMNS_08[col])) skip(`${col} is longer than ${JOB_COLUMNS_08[col]} characters`);
  if (v.includes("\0")) skip(`${col} holds a NUL character`);
  return v;
}

function integer(row: Record<string, unknown>, col: Column08, min: number, max: number): number | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    skip(`${col} is not a whole number from ${min} to ${max}`);
  return n;
}

function seconds(row: Record<string, unknown>, col: Column08): number | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > 10 * 365 * 86_400)
    skip(`${col} is not a number of seconds`);
  return v;
}

function time(row: Record<string, unknown>, col: Column08, nullable: boolean): string | null {
  const v = nullable ? text(row, col, true) : text(row, col, false);
  if (v !== null && !Number.isFinite(Date.parse(v))) skip(`${col} is not a time`);
  return v;
}

/**
 * JSON.parse of `s` only when its nesting stays within `depth` (counted outside strings, before parsing, so a
 * deeply nested value never reaches the parser or anything that walks the result); throws Skip08 when it is deeper
 * or not JSON.
 */
export function boundedJson(s: string, depth: number): unknown {
  let d = 0;
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++d > depth) throw new Skip08(`JSON nested deeper than ${depth} levels`);
    } else if (c === 93 || c === 125) d--;
  }
  try {
    return JSON.parse(s);
  } catch {
    throw new Skip08("not JSON");
  }
}

/** The column's JSON value; null when the column is null. */
function json(row: Record<string, unknown>, col: Column08, depth: number): unknown {
  const s = text(row, col, true);
  if (s === null) return null;
  try {
    return boundedJson(s, depth);
  } catch (e) {
    skip(`${col}: ${(e as Error).message}`);
  }
}

function stringArray(v: unknown, col: string, max: number, each: number): string[] {
  if (!Array.isArray(v)) skip(`${col} is not a JSON array`);
  if (v.length > max) skip(`${col} has more than ${max} entries`);
  for (const x of v) {
    if (typeof x !== "string") skip(`${col} holds something other than strings`);
    if (!fits(x, each) || x.includes("\0")) skip(`${col} holds an entry too long or with a NUL`);
  }
  return v as string[];
}

function envOf(v: unknown): Record<string, string> {
  if (v === null) return {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) skip("env_json is not a JSON object");
  const entries = Object.entries(v);
  if (entries.length > MAX_ENV) skip(`env_json has more than ${MAX_ENV} variables`);
  const out: Record<string, string> = {};
  for (const [k, x] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,255}$/.test(k))
      skip("env_json names a variable that is not a variable name");
    if (typeof x !== "string" || x.includes("\0")) skip(`env_json's ${k} is not a string`);
    out[k] = x;
  }
  return out;
}

function eventsOf(rows: Record<string, unknown>[]): Event08[] {
  if (rows.length > EVENTS_PER_JOB_08) skip(`more than ${EVENTS_PER_JOB_08} state events`);
  return rows.map((r) => {
    const { state, occurred_at, detail } = r;
    if (typeof state !== "string" || !fits(state, EVENT_COLUMNS_08.state))
      skip("a state event's state is not a short text");
    if (typeof occurred_at !== "string" || !fits(occurred_at, EVENT_COLUMNS_08.occurred_at))
      skip("a state event's time is not a short text");
    if (
      detail !== null &&
      detail !== undefined &&
      (typeof detail !== "string" || !fits(detail, EVENT_COLUMNS_08.detail))
    )
      skip("a state event's detail is not a short text");
    return { state, occurred_at, detail: (detail as string | null | undefined) ?? null };
  });
}

function snapshotOf(s: unknown): Record<string, unknown> | null {
  if (s === null || s === undefined) return null;
  if (typeof s !== "string") skip("its completion snapshot is not text");
  if (s.length > SNAPSHOT_CHARS_08)
    skip(`its completion snapshot is larger than ${SNAPSHOT_CHARS_08} characters`);
  let v: unknown;
  try {
    v = boundedJson(s, JSON_DEPTH_08);
  } catch (e) {
    skip(
      `its completion snapshot is ${(e as Error).message === "not JSON" ? "not JSON" : (e as Error).message}`,
    );
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    skip("its completion snapshot is not a JSON object");
  const snap = v as Record<string, unknown>;
  if (snap.artifacts !== undefined) {
    if (!Array.isArray(snap.artifacts) || snap.artifacts.length > MAX_ARTIFACTS)
      skip("its completion snapshot's artifacts are not a list of at most 1000");
    for (const a of snap.artifacts)
      if (typeof a !== "object" || a === null || Array.isArray(a))
        skip("an artifact of its snapshot is not an object");
  }
  return snap;
}

/** The largest PID Linux hands out (PID_MAX_LIMIT). */
const PID_MAX = 4_194_304;

/**
 * A raw `jobs` row (with its events and snapshot text) as a typed Job08, or throws Skip08 with the reason. The ID is
 * 0.8's pattern (`job_` + 22 upper-case hex digits) and nothing else: it names directories here.
 */
export function typeRow08(
  row: Record<string, unknown>,
  events: Record<string, unknown>[],
  snapshotText: unknown,
): Job08 {
  const job_id = text(row, "job_id", false);
  if (!JOB_ID_08_RE.test(job_id)) skip("its job_id is not an Awaitless 0.8 job ID (job_ + 22 hex digits)");
  const command = stringArray(json(row, "command_json", 4), "command_json", MAX_ARGV, 1 << 20);
  if (command.length === 0) skip("command_json is empty");
  const artifactsJson = json(row, "artifacts_json", 4);
  return {
    job_id,
    name: text(row, "name", true),
    backend: text(row, "backend", false),
    host: text(row, "host", true),
    command,
    cwd: text(row, "cwd", true),
    env: envOf(json(row, "env_json", 4)),
    state: text(row, "state", false),
    created_at: time(row, "created_at", false) as string,
    started_at: time(row, "started_at", true),
    finished_at: time(row, "finished_at", true),
    exit_code: integer(row, "exit_code", -(2 ** 31), 2 ** 31 - 1),
    timeout_seconds: seconds(row, "timeout_seconds"),
    stall_timeout_seconds: seconds(row, "stall_timeout_seconds"),
    pid: integer(row, "pid", 2, PID_MAX),
    pid_start_ticks: integer(row, "pid_start_ticks", 0, Number.MAX_SAFE_INTEGER),
    runner_pid: integer(row, "runner_pid", 2, PID_MAX),
    runner_start_ticks: integer(row, "runner_start_ticks", 0, Number.MAX_SAFE_INTEGER),
    pgid: integer(row, "pgid", 2, PID_MAX),
    backend_id: text(row, "backend_id", true),
    job_dir: text(row, "job_dir", true) ?? "",
    stdout_path: text(row, "stdout_path", true) ?? "",
    stderr_path: text(row, "stderr_path", true) ?? "",
    artifacts:
      artifactsJson === null ? [] : stringArray(artifactsJson, "artifacts_json", MAX_ARTIFACTS, 4096),
    queue_name: text(row, "queue_name", true),
    error: text(row, "error", true),
    events: eventsOf(events),
    snapshot: snapshotOf(snapshotText),
  };
}
