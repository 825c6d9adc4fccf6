// Secret redaction for every output path: known secret values plus well-known credential shapes.
import { cleanText, type TextTail, tailText } from "./text.ts";

export const REDACTED = "[REDACTED]";

/** Secret values shorter than this are ignored: redacting "a" or "yes" would shred every log. */
export const MIN_SECRET_LENGTH = 4;

/**
 * Raw bytes a caller should read beyond its return budget before redacting and cutting, so that a secret
 * straddling the cut is redacted whole while the text still extends past it (see `redactThenTail`).
 */
export const REDACTION_MARGIN_BYTES = 16 * 1024;

/**
 * Credential shapes, each anchored on a literal prefix so the scan stays linear on large input.
 * Replacers keep the parts that are not secret (header names, URL schemes, user names).
 */
interface Shape {
  re: RegExp;
  replace: (match: string, ...groups: string[]) => string;
  /** A literal every match contains (lower case when `re` ignores case): text without it is not scanned (a regular
   * expression is compiled at its first scan, which costs a command's start more than the rest of its redaction). */
  needs: string;
}

const whole = (): string => REDACTED;

const SHAPES: Shape[] = [
  // AWS access key IDs: long-term (AKIA) and temporary (ASIA).
  { re: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replace: whole, needs: "IA" },
  // AWS secret access keys appear bare only next to their well-known name.
  {
    re: /\b(aws_secret_access_key["']?[ \t]*[=:][ \t]*["']?)[A-Za-z0-9/+=]{40}\b/gi,
    replace: (_m, name) => `${name}${REDACTED}`,
    needs: "aws_secret_access_key",
  },
  // GitHub tokens: personal, OAuth, user-to-server, server-to-server, refresh; fine-grained PATs.
  { re: /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, replace: whole, needs: "gh" },
  { re: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: whole, needs: "github_pat_" },
  // GitLab personal access tokens.
  { re: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: whole, needs: "glpat-" },
  // Slack bot/app/user/refresh/session tokens.
  { re: /\bxox[baprs]-[A-Za-z0-9-]{10,}/g, replace: whole, needs: "xox" },
  // OpenAI and Anthropic style keys (sk-…, sk-proj-…, sk-ant-…): 20+ key characters, at least one a digit.
  { re: /\bsk-(?=[A-Za-z0-9_-]{20})(?=[A-Za-z_-]{0,100}\d)[A-Za-z0-9_-]+/g, replace: whole, needs: "sk-" },
  // Google API keys.
  { re: /\bAIza[0-9A-Za-z_-]{35}/g, replace: whole, needs: "AIza" },
  // npm access tokens.
  { re: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: whole, needs: "npm_" },
  // Authorization headers (also as JSON keys or curl -H arguments): keep the name and scheme, drop the value.
  {
    re: /\b((?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?)((?:bearer|basic|token|digest)[ \t]+)?([^\s"',;]+)/gi,
    replace: (_m, name, scheme = "") => `${name}${scheme}${REDACTED}`,
    needs: "authorization",
  },
  // Passwords in URL userinfo: scheme://user:password@host keeps scheme and user.
  {
    re: /\b([a-z][a-z0-9+.-]{0,30}:\/\/[^\s/@:]{0,256}:)[^\s/@]{1,512}@/gi,
    replace: (_m, prefix) => `${prefix}${REDACTED}@`,
    needs: "://",
  },
  // Credentials in URL query strings.
  {
    re: /([?&](?:password|passwd|pwd|token|access_token|refresh_token|api_key|apikey|secret|client_secret)=)[^&\s#"']+/gi,
    replace: (_m, name) => `${name}${REDACTED}`,
    needs: "=",
  },
];

const PEM_MARKER = /-----(BEGIN|END) (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_HEADER = /[A-Za-z][A-Za-z-]*: /y;

const isBase64Char = (code: number): boolean =>
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  (code >= 47 && code <= 57) ||
  code === 43 ||
  code === 61;

/** Length of a line break at `p`: a real one (`\n`, `\r\n`) or a JSON-escaped one (`\\n`, `\\r\\n`). */
function breakAt(text: string, p: number): number {
  if (text.startsWith("\n", p)) return 1;
  if (text.startsWith("\r\n", p)) return 2;
  if (text.startsWith("\\n", p)) return 2;
  if (text.startsWith("\\r\\n", p)) return 4;
  return 0;
}

/** Length of a line break ending at `p`, as `breakAt` counts them. */
function breakBefore(text: string, p: number): number {
  if (text[p - 1] === "\n") return text[p - 2] === "\r" ? 2 : 1;
  if (text[p - 1] === "n" && text[p - 2] === "\\") return text.startsWith("\\r", p - 4) ? 4 : 2;
  return 0;
}

/** Key body after a BEGIN marker: whole lines of base64 or `Name: value` armour headers; returns [start, end) or null. */
function bodyAfter(text: string, markerEnd: number): [number, number] | null {
  let first = -1;
  let last = -1;
  let p = markerEnd;
  for (;;) {
    const br = breakAt(text, p);
    if (br === 0) break;
    const lineStart = p + br;
    let q = lineStart;
    while (q < text.length && isBase64Char(text.charCodeAt(q))) q++;
    if (q < text.length && breakAt(text, q) === 0) {
      // Not all base64: only an armour header line (Proc-Type:, DEK-Info:, Version:) continues the body.
      PEM_HEADER.lastIndex = lineStart;
      if (!PEM_HEADER.test(text)) break;
      while (q < text.length && breakAt(text, q) === 0) q++;
    }
    if (q > lineStart) {
      if (first < 0) first = lineStart;
      last = q;
    }
    p = q;
    if (q >= text.length) break;
  }
  return first < 0 ? null : [first, last];
}

/** Key body before an END marker with no BEGIN in view (a tail cut through a key): whole base64 lines back to `floor`. */
function bodyBefore(text: string, markerStart: number, floor: number): [number, number] | null {
  let first = -1;
  let last = -1;
  let p = markerStart;
  for (;;) {
    const br = breakBefore(text, p);
    if (br === 0 || p - br < floor) break;
    const lineEnd = p - br;
    let q = lineEnd;
    while (
      q > floor &&
      isBase64Char(text.charCodeAt(q - 1)) &&
      !(text[q - 1] === "n" && text[q - 2] === "\\")
    )
      q--;
    if (q > floor && breakBefore(text, q) === 0) break;
    if (q < lineEnd) {
      if (last < 0) last = lineEnd;
      first = q;
    }
    p = q;
    if (q <= floor) break;
  }
  return first < 0 ? null : [first, last];
}

/**
 * Replaces the body of private key blocks (PEM, OpenSSH, PGP; real or JSON-escaped line breaks) and keeps the
 * BEGIN/END lines. Bodies are walked line by line from each marker, so a block cut off by either end of the
 * text is still redacted, and a marker merely mentioned in a command line redacts nothing after it.
 */
function redactPem(text: string): string {
  if (!text.includes("PRIVATE KEY")) return text;
  const ranges: [number, number][] = [];
  let floor = 0;
  for (const marker of text.matchAll(PEM_MARKER)) {
    if (marker.index < floor) continue;
    const markerEnd = marker.index + marker[0].length;
    const range = marker[1] === "BEGIN" ? bodyAfter(text, markerEnd) : bodyBefore(text, marker.index, floor);
    if (range) ranges.push(range);
    floor = Math.max(markerEnd, range ? range[1] : 0);
  }
  if (ranges.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    parts.push(text.slice(at, start), REDACTED);
    at = end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export interface RedactOptions {
  /** The text starts in the middle of a stream: a leading fragment that ends a secret value is redacted too. */
  startsMidStream?: boolean;
  /** The text stops in the middle of a stream: a trailing fragment that begins a secret value is redacted too. */
  endsMidStream?: boolean;
}

/**
 * Redacts known secret values and well-known credential shapes. Values shorter than
 * `MIN_SECRET_LENGTH` (4) characters and empty values are ignored on purpose. Redact whole text before
 * cutting it to a budget (`redactThenTail`), so a secret that straddles the cut is still matched whole.
 */
export class Redactor {
  private readonly secrets: string[];
  private readonly valuesRe: RegExp | null;

  constructor(secretValues: Iterable<string> = []) {
    const unique = new Set<string>();
    for (const value of secretValues) {
      // Each secret as given and as output cleaning leaves it (escapes stripped, CRLF → LF, controls dropped),
      // and each line of a multi-line secret, since logs are read and redacted line by line.
      const cleaned = cleanText(value);
      for (const form of [value, cleaned, ...cleaned.split("\n")])
        if (form.length >= MIN_SECRET_LENGTH) unique.add(form);
    }
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...unique].sort((a, b) => b.length - a.length);
    this.valuesRe = this.secrets.length ? new RegExp(this.secrets.map(escapeRegExp).join("|"), "g") : null;
  }

  /** True when at least one secret value is being redacted. */
  get hasSecretValues(): boolean {
    return this.secrets.length > 0;
  }

  /** Characters a streaming reader holds back from each chunk: one less than the longest secret. */
  get holdBack(): number {
    return this.secrets.length ? this.secrets[0]!.length - 1 : 0;
  }

  /** `cut` moved back before any secret occurrence that starts before it and ends after it. */
  safeCut(text: string, cut: number): number {
    let at = cut;
    for (let moved = true; moved; ) {
      moved = false;
      for (const s of this.secrets) {
        let i = text.indexOf(s, Math.max(0, at - s.length + 1));
        while (i >= 0 && i < at) {
          if (i + s.length > at) {
            at = i;
            moved = true;
            break;
          }
          i = text.indexOf(s, i + 1);
        }
      }
    }
    return at;
  }

  redact(text: string, opts: RedactOptions = {}): string {
    let out = text;
    if (this.valuesRe) out = out.replace(this.valuesRe, REDACTED);
    if (opts.startsMidStream) out = this.redactLeadingFragment(out);
    if (opts.endsMidStream) out = this.redactTrailingFragment(out);
    out = redactPem(out);
    let lower: string | undefined;
    for (const shape of SHAPES) {
      if (shape.re.ignoreCase && lower === undefined) lower = out.toLowerCase();
      if (!(shape.re.ignoreCase ? lower! : out).includes(shape.needs)) continue;
      out = out.replace(shape.re, shape.replace as (substring: string, ...args: string[]) => string);
      lower = undefined;
    }
    return out;
  }

  /** A proper suffix (≥ MIN_SECRET_LENGTH chars) of some secret at the very start of the text. */
  private redactLeadingFragment(text: string): string {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, text.length); k >= MIN_SECRET_LENGTH && k > longest; k--) {
        if (text.startsWith(secret.slice(secret.length - k))) {
          longest = k;
          break;
        }
      }
    }
    return longest ? REDACTED + text.slice(longest) : text;
  }

  /** A proper prefix (≥ MIN_SECRET_LENGTH chars) of some secret at the very end of the text. */
  private redactTrailingFragment(text: string): string {
    let longest = 0;
    for (const secret of this.secrets) {
      for (let k = Math.min(secret.length - 1, text.length); k >= MIN_SECRET_LENGTH && k > longest; k--) {
        if (text.endsWith(secret.slice(0, k))) {
          longest = k;
          break;
        }
      }
    }
    return longest ? text.slice(0, text.length - longest) + REDACTED : text;
  }
}

/**
 * Redacts a stream that arrives in chunks (`logs --follow`): the last `holdBack` characters of each chunk wait
 * for the next one, and so does a secret that crosses the cut, so a secret split across chunks is matched
 * whole; `end` flushes what is held.
 */
export class StreamRedactor {
  private pending = "";
  /** `pending` begins after bytes that were never seen. */
  private midStart = false;

  constructor(private readonly redactor: Redactor) {}

  /** The redacted text that is safe to print now; `gap` says bytes before this chunk were never seen. */
  push(chunk: string, gap = false): string {
    let flushed = "";
    if (gap) {
      flushed = this.pending ? this.redactor.redact(this.pending, { endsMidStream: true }) : "";
      this.pending = "";
    }
    if (gap) this.midStart = true;
    const text = this.pending + chunk;
    let cut = this.redactor.safeCut(text, Math.max(0, text.length - this.redactor.holdBack));
    // Never split a surrogate pair between what is printed and what is held.
    if (cut > 0 && cut < text.length && /[\uDC00-\uDFFF]/.test(text[cut]!)) cut--;
    this.pending = text.slice(cut);
    if (cut === 0) return flushed;
    const ready = this.redactor.redact(text.slice(0, cut), { startsMidStream: this.midStart });
    this.midStart = false;
    return flushed + ready;
  }

  /** Whatever is still held back, redacted: the stream has ended. */
  end(): string {
    const rest = this.pending;
    this.pending = "";
    return rest ? this.redactor.redact(rest, { startsMidStream: this.midStart }) : "";
  }
}

/** Redacts with no secret values: credential shapes only. */
export const shapeRedactor = new Redactor();

/**
 * Redacts `text` whole, then keeps the tail that fits `maxBytes`. Callers read at least
 * `maxBytes + REDACTION_MARGIN_BYTES` raw bytes, so the cut falls inside already-redacted text; the
 * start of what was read is treated as mid-stream when the read did not begin at the start of the log.
 */
export function redactThenTail(
  redactor: Redactor,
  text: string,
  maxBytes: number,
  opts: RedactOptions = {},
): TextTail {
  return tailText(redactor.redact(text, opts), maxBytes);
}
