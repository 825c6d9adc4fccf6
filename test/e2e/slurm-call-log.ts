// Counts the scheduler calls of real processes: squeue and sacct wrappers, placed first on PATH, log each call (time
// in ms, program, arguments) and then exec the real program. Used by the shared-poller e2e test and bench/slurm.ts.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LoggedCall {
  atMs: number;
  program: string;
  args: string;
}

export class CallLog {
  readonly binDir: string;
  readonly logPath: string;

  /** Writes the wrappers into `dir`/bin; the real programs are the ones PATH finds now. */
  constructor(dir: string, programs: readonly string[] = ["squeue", "sacct"]) {
    this.binDir = join(dir, "bin");
    this.logPath = join(dir, "calls.log");
    mkdirSync(this.binDir, { recursive: true });
    writeFileSync(this.logPath, "");
    for (const p of programs) {
      const real = Bun.which(p);
      if (real === null) throw new Error(`${p} is not on PATH`);
      const path = join(this.binDir, p);
      // one append per call (a single short write: lines of concurrent callers do not interleave)
      writeFileSync(
        path,
        `#!/bin/sh\nprintf '%s %s %s\\n' "$(date +%s%3N)" ${p} "$*" >> '${this.logPath}'\nexec '${real}' "$@"\n`,
      );
      chmodSync(path, 0o755);
    }
  }

  /** PATH with the wrappers first. */
  path(rest = process.env.PATH ?? "/usr/bin:/bin"): string {
    return `${this.binDir}:${rest}`;
  }

  calls(sinceMs = 0): LoggedCall[] {
    if (!existsSync(this.logPath)) return [];
    return readFileSync(this.logPath, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => {
        const [at = "0", program = "", ...rest] = l.split(" ");
        return { atMs: Number(at), program, args: rest.join(" ") };
      })
      .filter((c) => c.atMs >= sinceMs);
  }

  count(program: string, sinceMs = 0): number {
    return this.calls(sinceMs).filter((c) => c.program === program).length;
  }
}
