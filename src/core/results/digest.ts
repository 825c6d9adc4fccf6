// The failure digest: a few log lines that explain why a job failed, picked by simple error patterns.
import { cleanText } from "../util/text.ts";

/** Longest digest line, in characters; longer lines are cut with an ellipsis. */
export const DIGEST_LINE_MAX_CHARS = 300;

/**
 * A line explains a failure when it matches one of these. The rule: error words count when they are
 * used as a verdict (`error:`, an upper-case log level, an exception class, a non-zero count), not as
 * part of another word (`error-free`, `-Werror`, `errors`) or a zero count (`0 errors`, `0 failed`).
 */
const ERROR_PATTERNS: RegExp[] = [
  // "error:", "Error:", "error[E0308]:", "fatal error:"; not "errors:" or "error-free".
  /\berror(?:\[[\w-]*\])?:/i,
  // Log levels and verdicts in capitals: ERROR, FATAL, FAILED, FAIL, PANIC, CRITICAL.
  /\b(?:ERROR|FATAL|FAILED|FAIL|PANIC|CRITICAL)\b/,
  // Exception classes and the capitalised word: TypeError, AssertionError, NullPointerException, "Error 2".
  /\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b(?!-)|\b(?:Error|Exception)\b(?!-)/,
  /\b(?:unhandled|uncaught) exception\b|\bexception\b(?!s)(?=[ :])/i,
  // Go and Rust panics, Python tracebacks.
  /\bpanic(?:ked)?\b|^Traceback \(most recent call last\)/,
  // "fatal: not a git repository", but not "non-fatal".
  /(?<![\w-])fatal\b/i,
  // npm (v6 "npm ERR!", v7+ "npm error"), make ("*** [target] Error 2").
  /^npm (?:ERR!|error\b)|\*\*\* \[[^\]]{0,200}\] Error/,
  // pytest's assertion detail lines start with "E" and three or more spaces.
  /^E {3}/,
  // Failed assertions in several runners: "assertion failed", "assertion `left == right` failed".
  /\bassert(?:ion)?\b.{0,200}\bfailed\b/i,
  // Linkers, crashes, the shell and the kernel.
  /\bundefined reference to\b|\bsegmentation fault\b|\bcore dumped\b|\bbus error\b/i,
  /\bKilled\b|\bOOM\b/,
  /\bout of memory\b|\boom-kill/i,
  /\bcommand not found\b|: not found$|\bNo such file or directory\b|\bPermission denied\b/,
  // A non-zero count of failures: "2 failed", "1 error", "3 failing".
  /\b[1-9]\d* (?:failed|failing|errors?|failures?)\b/i,
  // "failed" as a verdict ("Build failed", "failed to open"), not "0 failed".
  /(?<!\b0 )\bfailed\b(?!:? 0\b)/i,
];

/** Characters of a line examined for error patterns: verdicts come early, and this bounds the work per line. */
const MATCH_PREFIX_CHARS = 2000;

/** True when a (clean) line looks like it explains a failure. */
export function isErrorLine(line: string): boolean {
  const head = line.length > MATCH_PREFIX_CHARS ? line.slice(0, MATCH_PREFIX_CHARS) : line;
  return ERROR_PATTERNS.some((re) => re.test(head));
}

function capLine(line: string): string {
  return line.length > DIGEST_LINE_MAX_CHARS ? `${line.slice(0, DIGEST_LINE_MAX_CHARS - 1)}…` : line;
}

function cleanLines(text: string): string[] {
  if (text === "") return [];
  return cleanText(text)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/**
 * Up to `maxLines` lines explaining a failure: the first error-pattern lines (stderr first, then stdout),
 * then the last non-empty stderr line, each cleaned, trimmed and capped, without duplicates. Pass already
 * redacted text. Callers use it for jobs that did not succeed; a successful job's digest is empty.
 */
export function failureDigest(stdout: string, stderr: string, maxLines = 8): string[] {
  if (maxLines <= 0) return [];
  const errLines = cleanLines(stderr);
  const outLines = cleanLines(stdout);
  const lastStderr = errLines.length ? capLine(errLines[errLines.length - 1] as string) : undefined;
  const room = lastStderr === undefined ? maxLines : maxLines - 1;
  const picked: string[] = [];
  const seen = new Set<string>();
  for (const line of [...errLines, ...outLines]) {
    if (picked.length >= room) break;
    if (!isErrorLine(line)) continue;
    const capped = capLine(line);
    if (seen.has(capped)) continue;
    seen.add(capped);
    picked.push(capped);
  }
  if (lastStderr !== undefined && !seen.has(lastStderr)) picked.push(lastStderr);
  return picked;
}
