// The log grep pattern language: a checked subset of POSIX ERE, matched byte-wise (C locale) per line, the same
// in-process (translated to a JavaScript RegExp over latin1 text) and on a remote host (`LC_ALL=C grep -E`).

import { invalid } from "../model/errors.ts";
import { assertBoundedPattern } from "./pattern-guard.ts";

export interface LogPattern {
  /** The pattern as the user wrote it (passed verbatim to `grep -E -e` on a remote host). */
  source: string;
  /** Global RegExp over latin1 text (one code unit per byte) that matches where the ERE matches a line. */
  regex: RegExp;
  /** The bytes every match is exactly, when the pattern is a plain literal (fast path), as latin1 text. */
  literal: string | null;
  /** Bytes every matching line contains (latin1), to find candidate lines before running the regex; null: none. */
  required: string | null;
}

const CLASSES: Record<string, string> = {
  alpha: "A-Za-z",
  digit: "0-9",
  alnum: "0-9A-Za-z",
  upper: "A-Z",
  lower: "a-z",
  space: " \\t\\x0b\\x0c\\r",
  blank: " \\t",
  punct: "!-\\/:-@\\[-`{-~",
  print: " -~",
  graph: "!-~",
  cntrl: "\\x00-\\x09\\x0b-\\x1f\\x7f",
  xdigit: "0-9A-Fa-f",
};

/** Characters a backslash makes literal (the ERE specials); any other escape is refused. */
const ESCAPABLE = new Set([..."^.[]$()|*+?{}\\"]);

const HINT =
  "Use POSIX extended regular expression syntax (as grep -E): . [abc] [^0-9] [[:digit:]] ( | ) * + ? {m,n} ^ $, " +
  "and a backslash only before one of . [ ] ( ) | * + ? { } ^ $ \\ to match it literally.";

function refuse(pattern: string, why: string, hint = HINT): never {
  throw invalid(`Invalid grep pattern ${JSON.stringify(pattern)}: ${why}`, hint, { pattern });
}

const hex = (byte: number): string => `\\x${byte.toString(16).padStart(2, "0")}`;

/** JavaScript source for one literal byte (ASCII letters and digits as themselves, everything else as \xHH). */
const litByte = (byte: number): string =>
  (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    ? String.fromCharCode(byte)
    : hex(byte);

/** Checks `pattern` against the supported ERE subset and translates it. */
export function compileLogPattern(pattern: string): LogPattern {
  if (pattern === "")
    refuse(pattern, "it is empty", "Give a pattern, or leave grep out to read lines without filtering.");
  if (/[\n\r\0]/.test(pattern))
    refuse(
      pattern,
      "it holds a line break or NUL",
      "A pattern matches within one line; search for one line.",
    );
  // Patterns whose matching time could grow exponentially with the line are refused before anything is read.
  assertBoundedPattern(pattern);
  const bytes = new TextEncoder().encode(pattern);
  let js = "";
  let literal: string | null = "";
  let depth = 0;
  // The longest run of literal bytes outside groups that every match contains (none with a top-level |).
  let run = "";
  let best = "";
  let topAlt = false;
  const flush = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  // What the previous item was: a quantifier may follow only an atom.
  let prev: "start" | "atom" | "quant" | "anchor" = "start";
  let i = 0;
  const at = (k: number): string => String.fromCharCode(bytes[k] ?? 0);
  while (i < bytes.length) {
    const c = at(i);
    if (c === "\\") {
      const next = at(i + 1);
      if (i + 1 >= bytes.length) refuse(pattern, "it ends with a lone backslash");
      if (!ESCAPABLE.has(next))
        refuse(
          pattern,
          `\\${next} is not POSIX extended syntax`,
          `${HINT} For \\d write [0-9], for \\w [[:alnum:]_], for \\s [[:space:]].`,
        );
      js += hex(next.charCodeAt(0));
      if (literal !== null) literal += next;
      if (depth === 0) run += next;
      prev = "atom";
      i += 2;
      continue;
    }
    if (c === "[") {
      const { source, end } = bracket(pattern, bytes, i);
      js += source;
      literal = null;
      flush();
      prev = "atom";
      i = end;
      continue;
    }
    if (c === "*" || c === "+" || c === "?" || c === "{") {
      if (prev !== "atom")
        refuse(
          pattern,
          `${c} must follow something to repeat`,
          `${HINT} Write \\${c} to match ${c} literally.`,
        );
      // A repeated literal byte may occur zero times (*, ?, {0,…}): it leaves the required run; + keeps it.
      const optional = c === "*" || c === "?" || (c === "{" && /^\{0[,}]/.test(pattern.slice(i)));
      if (optional && run.length > 0) run = run.slice(0, -1);
      flush();
      if (c === "{") {
        const m = /^\{(\d{1,3})(,(\d{1,3})?)?\}/.exec(pattern.slice(i));
        if (!m)
          refuse(
            pattern,
            "{ does not start a repetition such as {2} or {1,3}",
            `${HINT} Write \\{ for a brace.`,
          );
        const lo = Number(m[1]);
        const hi = m[3] === undefined ? null : Number(m[3]);
        if (lo > 255 || (hi !== null && (hi > 255 || hi < lo)))
          refuse(pattern, `the repetition ${m[0]} is out of order or above 255`);
        js += m[0];
        i += m[0].length;
      } else {
        js += c;
        i++;
      }
      literal = null;
      prev = "quant";
      continue;
    }
    if (c === "(") {
      if (at(i + 1) === ")") refuse(pattern, "() is an empty group");
      if (depth === 0) flush();
      depth++;
      js += "(?:";
      literal = null;
      prev = "start";
      i++;
      continue;
    }
    if (c === ")") {
      if (depth === 0) refuse(pattern, ") has no matching (", `${HINT} Write \\) for a parenthesis.`);
      if (prev === "start") refuse(pattern, "a group or alternative is empty");
      depth--;
      js += ")";
      prev = "atom";
      i++;
      continue;
    }
    if (c === "|") {
      if (prev === "start") refuse(pattern, "an alternative is empty");
      js += "|";
      if (depth === 0) topAlt = true;
      literal = null;
      prev = "start";
      i++;
      continue;
    }
    if (c === "^" || c === "$") {
      js += c === "^" ? "(?<![^\\n])" : "(?![^\\n])";
      literal = null;
      flush();
      prev = "anchor";
      i++;
      continue;
    }
    if (c === ".") {
      js += "[^\\n]";
      literal = null;
      flush();
      prev = "atom";
      i++;
      continue;
    }
    js += litByte(bytes[i] as number);
    if (literal !== null) literal += c;
    if (depth === 0) run += c;
    prev = "atom";
    i++;
  }
  if (depth > 0) refuse(pattern, "( is not closed", `${HINT} Write \\( for a parenthesis.`);
  if (prev === "start") refuse(pattern, "an alternative is empty");
  flush();
  return {
    source: pattern,
    regex: new RegExp(js, "g"),
    literal: literal === "" ? null : literal,
    required: topAlt || best === "" ? null : best,
  };
}

/**
 * The same pattern matching either case of each ASCII letter, as `grep -i` does in the C locale: a letter outside
 * brackets becomes `[aA]`, a bracket gains the other case of its letters and ranges (`[:upper:]`, `[:lower:]` become
 * `[:alpha:]`). Check the pattern (compileLogPattern) first: this rewrites a valid pattern, byte for byte elsewhere.
 */
export function foldCase(pattern: string): string {
  const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
  const letter = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
  let out = "";
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      out += pattern.slice(i, i + 2);
      i += 2;
    } else if (c === "[") {
      let j = i + 1;
      let body = "";
      let extra = "";
      if (pattern[j] === "^") {
        body += "^";
        j++;
      }
      let first = true;
      while (j < pattern.length && (pattern[j] !== "]" || first)) {
        first = false;
        const m = /^\[:(\w+):\]/.exec(pattern.slice(j));
        if (m) {
          body += m[1] === "upper" || m[1] === "lower" ? "[:alpha:]" : m[0];
          j += m[0].length;
          continue;
        }
        const lo = pattern[j]!;
        if (pattern[j + 1] === "-" && pattern[j + 2] !== undefined && pattern[j + 2] !== "]") {
          const hi = pattern[j + 2]!;
          body += `${lo}-${hi}`;
          extra += foldedRanges(lo.charCodeAt(0), hi.charCodeAt(0));
          j += 3;
          continue;
        }
        body += lo;
        if (letter(lo)) extra += other(lo);
        j++;
      }
      out += `[${body}${extra}]`;
      i = j + 1;
    } else {
      out += letter(c) ? `[${c}${other(c)}]` : c;
      i++;
    }
  }
  return out;
}

/** The other case of the letters in the range lo–hi (char codes), as ranges. */
function foldedRanges(lo: number, hi: number): string {
  let out = "";
  for (const [from, to, shift] of [
    [65, 90, 32],
    [97, 122, -32],
  ] as const) {
    const a = Math.max(lo, from);
    const b = Math.min(hi, to);
    if (a <= b) out += `${String.fromCharCode(a + shift)}-${String.fromCharCode(b + shift)}`;
  }
  return out;
}

/** A bracket expression starting at `start` ('['): its JavaScript class (never matching a newline) and its end. */
function bracket(pattern: string, bytes: Uint8Array, start: number): { source: string; end: number } {
  let i = start + 1;
  let negate = false;
  if (bytes[i] === 0x5e) {
    negate = true;
    i++;
  }
  let body = "";
  let first = true;
  for (;;) {
    if (i >= bytes.length) refuse(pattern, "[ is not closed", `${HINT} Write \\[ for a bracket.`);
    const b = bytes[i] as number;
    if (b === 0x5d && !first) break;
    first = false;
    if (b >= 0x80)
      refuse(pattern, "a non-ASCII character inside [...]", `${HINT} Write it outside brackets.`);
    if (b === 0x5c)
      refuse(
        pattern,
        "a backslash inside [...] (grep takes it literally, awk does not)",
        `${HINT} Match a backslash with \\\\ outside brackets.`,
      );
    if (b === 0x5b && (bytes[i + 1] === 0x3a || bytes[i + 1] === 0x3d || bytes[i + 1] === 0x2e)) {
      const kind = String.fromCharCode(bytes[i + 1] as number);
      const close = pattern.indexOf(`${kind}]`, i + 2);
      if (kind !== ":" || close < 0)
        refuse(
          pattern,
          `[${kind}…${kind}] is not supported inside [...]`,
          `${HINT} Classes: [:alpha:] [:digit:] …`,
        );
      const name = pattern.slice(i + 2, close);
      const cls = CLASSES[name];
      if (cls === undefined)
        refuse(
          pattern,
          `[:${name}:] is not a character class`,
          `Use one of ${Object.keys(CLASSES).join(", ")}.`,
        );
      body += cls;
      i = close + 2;
      continue;
    }
    if (bytes[i + 1] === 0x2d && bytes[i + 2] !== undefined && bytes[i + 2] !== 0x5d) {
      const hi = bytes[i + 2] as number;
      if (hi >= 0x80 || hi === 0x5c || hi === 0x5b)
        refuse(pattern, `the range ${String.fromCharCode(b)}-${String.fromCharCode(hi)} inside [...]`);
      if (hi < b)
        refuse(pattern, `the range ${String.fromCharCode(b)}-${String.fromCharCode(hi)} is backwards`);
      body += `${hex(b)}-${hex(hi)}`;
      i += 3;
      continue;
    }
    body += hex(b);
    i++;
  }
  return { source: negate ? `[^\\n${body}]` : `[${body}]`, end: i + 1 };
}
