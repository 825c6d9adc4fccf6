// Human output: aligned tables, state colours (NO_COLOR and non-TTY honoured), human durations.
import type { JobState } from "../core/model/job.ts";
import { shownJson } from "./terminal-safe.ts";

export interface Style {
  color: boolean;
}

export function styleFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): Style {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0";
  return { color: forced || (Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== "dumb") };
}

const CODES: Record<string, [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

export function paint(style: Style, color: keyof typeof CODES, text: string): string {
  if (!style.color) return text;
  const [open, close] = CODES[color]!;
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

const STATE_COLOR: Record<JobState, keyof typeof CODES> = {
  queued: "dim",
  starting: "cyan",
  running: "blue",
  stalled: "yellow",
  succeeded: "green",
  failed: "red",
  cancelled: "magenta",
  timed_out: "red",
  lost: "red",
};

export function stateText(style: Style, state: JobState): string {
  return paint(style, STATE_COLOR[state], state);
}

/** 0.4s, 12s, 3m05s, 2h10m, 3d04h */
export function humanDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "-";
  if (seconds < 10) return `${Math.max(0, Math.round(seconds * 10) / 10)}s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, "0")}h`;
}

/** "3m ago" from an ISO time. */
export function ago(iso: string | null, nowMs: number = Date.now()): string {
  if (!iso) return "-";
  return `${humanDuration((nowMs - Date.parse(iso)) / 1000)} ago`;
}

export { humanBytes } from "../core/util/text.ts";

const ANSI_RE = /\x1b\[[0-9;]*m/g;

export function visibleWidth(s: string): number {
  return [...s.replace(ANSI_RE, "")].length;
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(headers: string[], rows: string[][], style: Style): string {
  const widths = headers.map((h, i) =>
    Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - visibleWidth(c))))
      .join("  ")
      .trimEnd();
  return [paint(style, "bold", line(headers)), ...rows.map(line)].join("\n");
}

/** A command line for display, quoting only what needs it. */
export function displayArgv(argv: string[], max = 60): string {
  const text = argv.map((a) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(a) ? a : shownJson(a))).join(" ");
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/** One word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`;
}
