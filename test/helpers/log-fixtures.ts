// Log scan fixtures: a query with the defaults a caller leaves out, numbered lines, job directories of log files.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LogQuery } from "../../src/core/logs/log-query.ts";
import { compileLogPattern } from "../../src/core/logs/pattern.ts";

/** A query: the whole log, no limit, backwards, a 1 MiB budget, unless `over` says otherwise (`grep` is compiled). */
export const q = (over: Partial<LogQuery> & { grep?: string } = {}): LogQuery => {
  const { grep, ...rest } = over;
  return {
    pattern: grep === undefined ? null : compileLogPattern(grep),
    from: 1,
    to: null,
    limit: null,
    forward: false,
    budget: 1 << 20,
    ...rest,
  };
};

/** `n` lines, `line 000001` … unless `f` words them, each ending in a newline. */
export const numbered = (n: number, f = (i: number) => `line ${String(i).padStart(6, "0")}`): string =>
  Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join("");

/** Makes job directories under `root`, each holding the files given (stdout, stdout.head, stdout.prev, …). */
export function jobDirsIn(root: string): (files: Record<string, string | Uint8Array>) => string {
  let made = 0;
  return (files) => {
    const dir = join(root, `job${made++}`);
    mkdirSync(dir);
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
    return dir;
  };
}
