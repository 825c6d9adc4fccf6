// ssh_config lexical rules as OpenSSH applies them: splitting a line into keyword and arguments,
// `Host` pattern matching, and the value syntaxes (times, ports, yes/no) of the keywords we read.

import { AwaitlessError } from "../core/model/errors.ts";

/** Where a config line came from, for error messages. */
export interface ConfigLocation {
  file: string;
  line: number;
}

export interface ConfigLine extends ConfigLocation {
  /** Lowercased keyword. */
  keyword: string;
  args: string[];
}

export function configError(at: ConfigLocation, what: string, fix: string): AwaitlessError {
  return new AwaitlessError("config_invalid", `${at.file} line ${at.line}: ${what}`, fix, {
    file: at.file,
    line: at.line,
  });
}

const SPACE = /[ \t\r\f\v]/;

// Splits one line like OpenSSH's strdelim + argv_split: the keyword ends at whitespace or a single
// `=`; arguments are whitespace-separated, may be quoted with " or ', a backslash escapes a quote,
// a backslash or (outside quotes) a space, and a word starting with `#` begins a comment.
export function splitConfigLine(text: string, at: ConfigLocation): ConfigLine | undefined {
  let i = 0;
  while (i < text.length && SPACE.test(text.charAt(i))) i++;
  const start = i;
  while (i < text.length && !SPACE.test(text.charAt(i)) && text.charAt(i) !== "=") i++;
  const keyword = text.slice(start, i).toLowerCase();
  if (keyword === "" || keyword.startsWith("#")) return undefined;
  while (i < text.length && SPACE.test(text.charAt(i))) i++;
  if (text.charAt(i) === "=") i++;
  const args: string[] = [];
  let word: string | undefined;
  let quote = "";
  for (; i < text.length; i++) {
    const c = text.charAt(i);
    if (quote === "" && SPACE.test(c)) {
      if (word !== undefined) args.push(word);
      word = undefined;
      continue;
    }
    if (quote === "" && c === "#" && word === undefined) break;
    const next = text.charAt(i + 1);
    if (c === "\\" && (next === '"' || next === "'" || next === "\\" || (quote === "" && next === " "))) {
      word = (word ?? "") + next;
      i++;
    } else if (quote === "" && (c === '"' || c === "'")) {
      quote = c;
      word = word ?? "";
    } else if (quote !== "" && c === quote) {
      quote = "";
    } else {
      word = (word ?? "") + c;
    }
  }
  if (quote !== "") throw configError(at, "unterminated quote", "Close the quote or remove it.");
  if (word !== undefined) args.push(word);
  if (args.length === 0) {
    throw configError(
      at,
      `no argument after keyword "${keyword}"`,
      `Give ${keyword} a value or delete the line.`,
    );
  }
  return { file: at.file, line: at.line, keyword, args };
}

// OpenSSH's match_pattern: `*` is any run of characters (also none), `?` exactly one character.
export function matchGlob(text: string, pattern: string): boolean {
  let t = 0;
  let p = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const pc = pattern.charAt(p);
    if (p < pattern.length && (pc === "?" || pc === text.charAt(t))) {
      t++;
      p++;
    } else if (pc === "*") {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern.charAt(p) === "*") p++;
  return p === pattern.length;
}

// A `Host` line matches when some positive pattern matches and no `!pattern` does (case-sensitive).
export function hostLineMatches(alias: string, patterns: string[]): boolean {
  let matched = false;
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    if (!matchGlob(alias, negated ? raw.slice(1) : raw)) continue;
    if (negated) return false;
    matched = true;
  }
  return matched;
}

// OpenSSH's convtime: a number of seconds, or a sum like `1h30m` with units s, m, h, d, w.
export function parseTimeSec(value: string, at: ConfigLocation, keyword: string): number {
  const unitSec: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
  const v = value.toLowerCase();
  if (!/^(?:\d+[smhdw]?)+$/.test(v)) {
    throw configError(
      at,
      `invalid time value "${value}" for ${keyword}`,
      "Write whole seconds, e.g. 30, or 1m30s.",
    );
  }
  let total = 0;
  for (const part of v.match(/\d+[smhdw]?/g) ?? []) {
    const unit = /[smhdw]$/.test(part) ? part.slice(-1) : "";
    total += Number.parseInt(part, 10) * (unitSec[unit] ?? 1);
  }
  return total;
}

export function parsePort(value: string, at: ConfigLocation): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw configError(at, `bad port "${value}"`, "Write a port number between 1 and 65535.");
  }
  return port;
}

export function parseNonNegativeInt(value: string, at: ConfigLocation, keyword: string): number {
  if (!/^\d+$/.test(value)) {
    throw configError(
      at,
      `${keyword} "${value}" is not a whole number`,
      `Write ${keyword} as a number, e.g. 3.`,
    );
  }
  return Number(value);
}

export function parseYesNo(value: string, at: ConfigLocation, keyword: string): boolean {
  const v = value.toLowerCase();
  if (v === "yes" || v === "true") return true;
  if (v === "no" || v === "false") return false;
  throw configError(
    at,
    `${keyword} "${value}" is not yes or no`,
    `Write "${keyword} yes" or "${keyword} no".`,
  );
}

export type StrictHostKeyChecking = "yes" | "no" | "ask" | "accept-new";

export function parseStrictHostKeyChecking(value: string, at: ConfigLocation): StrictHostKeyChecking {
  const v = value.toLowerCase();
  if (v === "yes" || v === "true") return "yes";
  if (v === "no" || v === "false" || v === "off") return "no";
  if (v === "ask" || v === "accept-new") return v;
  throw configError(
    at,
    `StrictHostKeyChecking "${value}" is not supported`,
    "Write one of yes, no, ask, accept-new (awaitless never prompts: ask behaves like yes).",
  );
}

/** The single ProxyJump hop; `host` is itself an alias to resolve, `user`/`port` override what it resolves to. */
export interface JumpHost {
  host: string;
  user?: string;
  port?: number;
}
