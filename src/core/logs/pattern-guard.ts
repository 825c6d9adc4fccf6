// Refuses grep patterns from clients whose backtracking can take exponential time (nested repetition,
// alternation under repetition, back-references, lookaround) before any regex engine runs them.
import { invalid } from "../model/errors.ts";

/** Longest grep pattern accepted, in characters. */
export const MAX_GREP_PATTERN_CHARS = 4096;

interface Frame {
  /** The group's text holds a quantifier (of any kind). */
  quantified: boolean;
  /** The group's text holds an alternation. */
  alternated: boolean;
  start: number;
}

const HINT =
  "Rewrite it without a repeated group that itself repeats or alternates (e.g. '(a+)+' as 'a+', '(x|y)*' as '[xy]*'); back-references and lookaround are not accepted.";

function refuse(pattern: string, why: string): never {
  throw invalid(`grep pattern ${JSON.stringify(pattern)} is refused: ${why}`, HINT, { pattern });
}

// A quantifier at `i`: its length and whether it repeats (more than once), else undefined.
function quantifierAt(p: string, i: number): { length: number; repeats: boolean } | undefined {
  const c = p[i];
  let length = 0;
  let repeats = false;
  if (c === "*" || c === "+") {
    length = 1;
    repeats = true;
  } else if (c === "?") {
    length = 1;
  } else if (c === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i, i + 24));
    if (m === null) return undefined;
    length = m[0].length;
    const max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Number.POSITIVE_INFINITY : Number(m[3]);
    repeats = max > 1;
  } else {
    return undefined;
  }
  if (p[i + length] === "?") length++; // lazy
  return { length, repeats };
}

// Index just past the character class opening at `i` (`[`).
function skipClass(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === "^") j++;
  while (j < p.length && p[j] !== "]") j += p[j] === "\\" ? 2 : 1;
  return j + 1;
}

/**
 * Throws invalid_argument for a pattern whose matching time can grow exponentially with the line: a repeated
 * group (`*`, `+`, `{n,}`, `{n,m}` with m > 1) whose body holds a quantifier or `|`, a back-reference, or
 * lookaround; and for patterns over MAX_GREP_PATTERN_CHARS. Syntax errors are left to the compiler.
 */
export function assertBoundedPattern(pattern: string): void {
  if (pattern.length > MAX_GREP_PATTERN_CHARS) {
    refuse(pattern.slice(0, 40), `it is ${pattern.length} characters, over ${MAX_GREP_PATTERN_CHARS}`);
  }
  const stack: Frame[] = [{ quantified: false, alternated: false, start: 0 }];
  const top = () => stack[stack.length - 1] as Frame;
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    let atomEnd = i + 1;
    let inner: Frame | undefined;
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") refuse(pattern, "it uses a back-reference");
      atomEnd = i + 2;
    } else if (c === "[") {
      atomEnd = skipClass(pattern, i);
    } else if (c === "(") {
      if (/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) refuse(pattern, "it uses lookaround");
      stack.push({ quantified: false, alternated: false, start: i });
      i++;
      continue;
    } else if (c === "|") {
      top().alternated = true;
      i++;
      continue;
    } else if (c === ")") {
      if (stack.length > 1) inner = stack.pop();
    }
    const q = quantifierAt(pattern, atomEnd);
    if (inner !== undefined) {
      if (q?.repeats === true && (inner.quantified || inner.alternated)) {
        const group = pattern.slice(inner.start, atomEnd);
        const what = inner.quantified ? "itself repeats" : "alternates";
        refuse(pattern, `the group ${group} is repeated and ${what}, which can take exponential time`);
      }
      top().quantified ||= inner.quantified;
      top().alternated ||= inner.alternated;
    }
    if (q !== undefined) top().quantified = true;
    i = atomEnd + (q?.length ?? 0);
  }
}
