// Seeded short jobs whose last writes come right before exit, and the check that the sealed result's tails end with
// exactly those bytes (test/contract/tails.test.ts in CI, bench/tails.ts at a larger count).

import { prng } from "../helpers/prng.ts";
import type { Target } from "./contract.ts";

export interface TailCase {
  script: string;
  /** What stdout must end with, and its whole size in bytes. */
  outEnd: string;
  outBytes: number;
  errEnd: string;
}

/** One job whose last writes (stdout and stderr, with or without a final newline, small or large) precede its exit. */
function tailCase(rand: () => number, tag: string): TailCase {
  const bulk = [0, 1, 4096, 65_536 + 17, 300_001][Math.floor(rand() * 5)]!;
  const newline = rand() < 0.5 ? "\\n" : "";
  const last = `last-${tag}`;
  const err = `err-${tag}`;
  const fill = bulk === 0 ? "" : `head -c ${bulk} /dev/zero | tr '\\0' x; `;
  const out = `${fill}printf '${last}${newline}'`;
  const script = `${rand() < 0.5 ? `${out}; printf '${err}' >&2` : `printf '${err}' >&2; ${out}`}; exit 0`;
  return {
    script,
    outEnd: `${last}${newline ? "\n" : ""}`,
    outBytes: bulk + last.length + (newline ? 1 : 0),
    errEnd: err,
  };
}

/** Submits every case, then waits for each; returns one line per job whose sealed result is not as written. */
export async function runTailCases(t: Target, seed: number, count: number): Promise<string[]> {
  const rand = prng(seed);
  const cases = Array.from({ length: count }, (_, n) => tailCase(rand, `${seed}-${n}`));
  const wrong: string[] = [];
  // all submitted before the first wait, so their ends overlap
  const ids = cases.map((c) => t.sb.submit(["sh", "-c", c.script], t.flags));
  for (const [i, id] of ids.entries()) {
    const c = cases[i]!;
    const r = await t.sb.runAsync(["wait", "--json", id]);
    const out = String(r.json?.stdout_tail ?? "");
    const err = String(r.json?.stderr_tail ?? "");
    if (
      r.json?.state !== "succeeded" ||
      r.json.stdout_bytes !== c.outBytes ||
      !out.endsWith(c.outEnd) ||
      !err.endsWith(c.errEnd)
    )
      wrong.push(
        `${c.script}: ${r.json?.state} stdout_bytes ${r.json?.stdout_bytes} (want ${c.outBytes}), stdout ends ${JSON.stringify(out.slice(-40))}, stderr ends ${JSON.stringify(err.slice(-40))}`,
      );
  }
  return wrong;
}
