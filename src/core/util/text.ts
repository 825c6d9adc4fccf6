// Turning raw log bytes into text fit for a result: UTF-8 repair, escape stripping, progress-frame collapse, tails.
const decoder = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

/**
 * Terminal escape sequences, most specific first:
 * CSI (`ESC [` params intermediates final, or 8-bit 0x9B); string sequences OSC/DCS/SOS/PM/APC
 * (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`, or their 8-bit forms) ended by BEL or ST (`ESC \` / 0x9C),
 * or, when unterminated (a cut log), by the end of the line; then any other `ESC` sequence
 * (intermediates + one final byte, e.g. `ESC ( B`, `ESC 7`); then a lone `ESC`.
 */
const ESCAPES =
  /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x9b[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x1b[\x20-\x2f]*[\x30-\x7e]|\x1b/g;

/** Control characters left after escapes and frames are handled; tab and newline survive. */
const LEFTOVER_CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Number of UTF-8 continuation bytes (10xxxxxx) at the start, at most 3: the tail of a character cut off. */
function leadingContinuationBytes(bytes: Uint8Array): number {
  let n = 0;
  while (n < 3 && n < bytes.length && ((bytes[n] as number) & 0xc0) === 0x80) n++;
  return n;
}

/** Decodes UTF-8, replacing invalid bytes with U+FFFD; the orphaned tail of a character cut at the start is dropped. */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes.subarray(leadingContinuationBytes(bytes)));
}

/** Applies backspaces: each one erases the character before it on the same line. */
function applyBackspaces(line: string): string {
  const out: string[] = [];
  for (const ch of line) {
    if (ch === "\b") out.pop();
    else out.push(ch);
  }
  return out.join("");
}

/** A line as a terminal would finally show a progress bar: only the text after the last `\r` that has text after it. */
function collapseFrames(line: string): string {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
  const body = line.slice(0, end);
  const lastCr = body.lastIndexOf("\r");
  return lastCr < 0 ? body : body.slice(lastCr + 1);
}

/**
 * Log bytes (or text) to clean text: valid UTF-8 (invalid bytes → U+FFFD; the partial character at the
 * start of a tail slice is skipped), ANSI/VT escapes removed, `\r`-overwritten progress frames collapsed
 * (`\r\n` is a plain newline), backspaces applied, other control characters except tab dropped.
 */
export function cleanText(input: Uint8Array | string): string {
  const text = typeof input === "string" ? input : decodeUtf8(input);
  const stripped = text.replace(ESCAPES, "").replace(/\r\n/g, "\n");
  let lines = stripped;
  if (stripped.includes("\r") || stripped.includes("\b")) {
    lines = stripped
      .split("\n")
      .map((line) => {
        const collapsed = line.includes("\r") ? collapseFrames(line) : line;
        return collapsed.includes("\b") ? applyBackspaces(collapsed) : collapsed;
      })
      .join("\n");
  }
  return lines.replace(LEFTOVER_CONTROLS, "");
}

/** One-line form for names, reasons and status messages: escapes removed, control characters and line breaks → one space. */
export function sanitizeControl(text: string, maxChars = Number.POSITIVE_INFINITY): string {
  const flat = text
    .replace(ESCAPES, "")
    .replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]+/g, " ")
    .trim();
  return flat.length > maxChars ? `${flat.slice(0, Math.max(0, maxChars - 1))}…` : flat;
}

export interface BudgetSplit {
  stdoutBytes: number;
  stderrBytes: number;
}

/**
 * How many bytes of each stream's tail to keep when both share `maxReturnBytes`. Everything is kept
 * when it fits; otherwise stderr is guaranteed at least half (rounded up), and whatever one stream
 * does not need goes to the other.
 */
export function splitBudget(stdoutLen: number, stderrLen: number, maxReturnBytes: number): BudgetSplit {
  const budget = Math.max(0, Math.floor(maxReturnBytes));
  const out = Math.max(0, Math.floor(stdoutLen));
  const err = Math.max(0, Math.floor(stderrLen));
  if (out + err <= budget) return { stdoutBytes: out, stderrBytes: err };
  const stderrBytes = Math.min(err, Math.max(Math.ceil(budget / 2), budget - out));
  return { stdoutBytes: Math.min(out, budget - stderrBytes), stderrBytes };
}

/**
 * The last `maxBytes` bytes, starting on a line boundary when that costs at most half the budget;
 * otherwise starting on a UTF-8 character boundary.
 */
export function tailBytes(bytes: Uint8Array, maxBytes: number): Uint8Array {
  const budget = Math.max(0, Math.floor(maxBytes));
  if (bytes.length <= budget) return bytes;
  if (budget === 0) return bytes.subarray(bytes.length);
  let start = bytes.length - budget;
  if (bytes[start - 1] !== 0x0a) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline !== -1 && newline + 1 < bytes.length && newline + 1 - start <= budget / 2) {
      start = newline + 1;
    } else {
      start += leadingContinuationBytes(bytes.subarray(start));
    }
  }
  return bytes.subarray(start);
}

export interface TextTail {
  text: string;
  truncated: boolean;
}

/** The end of `text` that fits in `maxBytes` of UTF-8, cut as `tailBytes` cuts. */
export function tailText(text: string, maxBytes: number): TextTail {
  // Cheap exit: UTF-16 length × 3 bounds the UTF-8 length.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false };
  return { text: decoder.decode(tailBytes(bytes, maxBytes)), truncated: true };
}

/** Byte length of `text` in UTF-8. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** "3.0 MiB", "512 B". */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
