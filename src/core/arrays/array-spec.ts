// Job arrays' index language: `0-99%8`, `1,3,5`, `0-20:2` (Slurm's --array syntax), and task addresses `JOB_ID.7`.
import { invalid } from "../model/errors.ts";

/** Most tasks one array may have (a guard against typos: 0-1000000 is rarely meant). */
export const MAX_ARRAY_TASKS = 10_000;
/** Highest index a task may have. */
export const MAX_ARRAY_INDEX = 4_000_000;

export interface ArraySpec {
  /** The task indices, ascending, each once. */
  indices: number[];
  /** At most this many tasks run at once. */
  throttle: number;
}

const SYNTAX_HINT =
  "give indices as a range (0-99), a list (1,3,5) or a range with a step (0-20:2), optionally followed by %N, at most N running at once (e.g. 0-99%8)";

function int(text: string, what: string, whole: string): number {
  if (!/^\d{1,7}$/.test(text))
    throw invalid(`bad array ${what} ${JSON.stringify(text)} in ${JSON.stringify(whole)}`, SYNTAX_HINT);
  return Number(text);
}

/** Parses and validates an array specification; the throttle defaults to every task at once. */
export function parseArraySpec(text: string): ArraySpec {
  const whole = text;
  const t = text.trim();
  if (t === "") throw invalid("empty array specification", SYNTAX_HINT);
  const [list, throttleText, extra] = t.split("%");
  if (extra !== undefined)
    throw invalid(`more than one % in array specification ${JSON.stringify(whole)}`, SYNTAX_HINT);
  const set = new Set<number>();
  for (const part of list!.split(",")) {
    const m = /^([^-:]+)(?:-([^:]+)(?::(.+))?)?$/.exec(part);
    if (!m)
      throw invalid(`bad array element ${JSON.stringify(part)} in ${JSON.stringify(whole)}`, SYNTAX_HINT);
    const lo = int(m[1]!, "index", whole);
    const hi = m[2] === undefined ? lo : int(m[2], "index", whole);
    const step = m[3] === undefined ? 1 : int(m[3], "step", whole);
    if (hi < lo)
      throw invalid(`array range ${part} ends before it starts`, "write the lower index first, e.g. 0-99");
    if (step < 1)
      throw invalid(`array step ${step} in ${part} is not at least 1`, "give a step ≥ 1, e.g. 0-20:2");
    if (hi > MAX_ARRAY_INDEX)
      throw invalid(
        `array index ${hi} is above ${MAX_ARRAY_INDEX}`,
        `use indices from 0 to ${MAX_ARRAY_INDEX}`,
      );
    if ((hi - lo) / step + 1 + set.size > MAX_ARRAY_TASKS) throw tooMany(whole);
    for (let i = lo; i <= hi; i += step) set.add(i);
  }
  if (set.size > MAX_ARRAY_TASKS) throw tooMany(whole);
  const indices = [...set].sort((a, b) => a - b);
  let throttle = indices.length;
  if (throttleText !== undefined) {
    if (!/^\d{1,7}$/.test(throttleText) || Number(throttleText) < 1) {
      throw invalid(
        `bad array throttle %${throttleText} in ${JSON.stringify(whole)}`,
        "give %N with N ≥ 1, at most N tasks running at once (e.g. 0-99%8), or leave it out to run every task at once",
      );
    }
    throttle = Math.min(Number(throttleText), indices.length);
  }
  return { indices, throttle };
}

function tooMany(whole: string) {
  return invalid(
    `array ${JSON.stringify(whole)} has more than ${MAX_ARRAY_TASKS} tasks`,
    `split it into arrays of at most ${MAX_ARRAY_TASKS} tasks`,
  );
}

/** A task address `JOB_ID.7` split into the array's ID and the index; undefined when the text is no task address. */
export function parseTaskAddress(text: string): { arrayId: string; index: number } | undefined {
  const m = /^(.+)\.(\d{1,7})$/.exec(text);
  if (!m) return undefined;
  return { arrayId: m[1]!, index: Number(m[2]) };
}
