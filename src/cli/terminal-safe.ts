// Text someone else wrote (a job's name, cwd, artifact names, a host's error, a row of an imported store), made safe
// for a terminal before it is printed: control characters (C0, DEL, C1: ESC starts OSC 52 clipboard writes and
// title changes, 0x9B is a one-byte CSI) and bidirectional overrides and isolates become visible escapes.

/** C0, DEL, C1, the bidi marks, embeddings, overrides and isolates, and the Unicode line/paragraph separators. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_BUT_LINES =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visible(c: string): string {
  return NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** One line of someone else's text for a terminal: every control, bidi and line-breaking character escaped (`\u001b`, `\n`). */
export function shown(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** Several lines of someone else's text (a log tail, an error with its details): as `shown`, keeping newlines and tabs. */
export function shownLines(text: string): string {
  return text.replace(UNSAFE_BUT_LINES, visible);
}

/** A JSON text shown on a terminal (JSON.stringify leaves C1 and bidi characters raw): the same escapes, still JSON. */
export function shownJson(value: unknown): string {
  return shown(JSON.stringify(value) ?? "null");
}
