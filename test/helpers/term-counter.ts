// A command that counts the SIGTERMs it receives, for the one-TERM tests of every backend: it prints `ready`, and on
// the first TERM runs 3 s of cleanup (a TERM meanwhile is counted too) before it writes `term-done` and exits 0.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** argv of the counter writing `term-count` and `term-done` into DIR (a shell word, e.g. "$AWAITLESS_JOB_DIR"). */
export function termCounter(dir: string, opts: { ignoreTerm?: boolean } = {}): string[] {
  const script = `n=0
trap 'n=$((n+1)); echo "$n" > ${dir}/term-count' TERM
echo ready
while [ "$n" -eq 0 ] || [ ${opts.ignoreTerm ? 1 : 0} = 1 ]; do sleep 0.1; done
i=0
while [ "$i" -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
echo "cleaned up after $n TERM" > ${dir}/term-done`;
  return ["sh", "-c", script];
}

/** How many TERMs the counter has recorded in `dir` (0 before the first). */
export function termsIn(dir: string): number {
  const path = join(dir, "term-count");
  return existsSync(path) ? Number(readFileSync(path, "utf8").trim()) : 0;
}

/** What the counter wrote when its cleanup ended, or null when it never got there. */
export function cleanupIn(dir: string): string | null {
  const path = join(dir, "term-done");
  return existsSync(path) ? readFileSync(path, "utf8") : null;
}
