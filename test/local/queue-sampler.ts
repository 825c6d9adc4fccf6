// Continuous sampling of a data directory's queue (running/ and waiting/ entries) and of its jobs' wrapper files,
// for the end-to-end queue tests: how many ran at once, and whether admission ever overtook a waiting job.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface QueueSample {
  samples: number;
  maxRunningEntries: number;
  maxRunningCommands: number;
  fifoViolations: string[];
  /** A sample saw the gate's `limit` commands running and every other job waiting in line (then the gate opened). */
  sawFull: boolean;
}

/**
 * A throttle's test gate: the jobs wait for `path` to exist before they end. It is created once one sample shows
 * `limit` commands running and every other job waiting in line, so the run is seen at its limit however slow the
 * machine, and a throttle that admits one more shows it before the gate opens.
 */
export interface Gate {
  path: string;
  limit: number;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function tickets(root: string): { running: number[]; waiting: number[] } {
  const running: number[] = [];
  for (const name of list(join(root, "running"))) {
    try {
      const m = /^ticket=(\d+)$/m.exec(readFileSync(join(root, "running", name), "utf8"));
      if (m) running.push(Number(m[1]));
    } catch {
      // freed between listing and reading
    }
  }
  return { running, waiting: list(join(root, "waiting")).map((n) => Number(n.split(".")[0])) };
}

/**
 * Samples until `done()` resolves true (or, with a gate, a sample saw more than its limit running). Commands
 * running = started record and no exit record (all started read first, so the count never overstates); FIFO: no
 * running entry may hold a later ticket than one still waiting (running read before waiting, so the waiting one was
 * waiting at that moment too). The gate, if any, is opened before this returns.
 */
export async function sampleQueue(
  dataDir: string,
  jobIds: () => string[],
  done: () => Promise<boolean> | boolean,
  opts: { gate?: Gate; timeoutMs?: number } = {},
): Promise<QueueSample> {
  const { gate, timeoutMs = 90_000 } = opts;
  const root = join(dataDir, "queues");
  const out: QueueSample = {
    samples: 0,
    maxRunningEntries: 0,
    maxRunningCommands: 0,
    fifoViolations: [],
    sawFull: false,
  };
  const deadline = Date.now() + timeoutMs;
  try {
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`queue sampling: jobs not done after ${timeoutMs} ms`);
      const t = tickets(root);
      out.maxRunningEntries = Math.max(out.maxRunningEntries, t.running.length);
      const ids = jobIds();
      const dirs = ids.map((id) => join(dataDir, "jobs", id));
      const started = dirs.filter((d) => existsSync(join(d, "started")));
      const running = started.filter((d) => !existsSync(join(d, "exit"))).length;
      out.maxRunningCommands = Math.max(out.maxRunningCommands, running);
      const lowest = Math.min(...t.waiting);
      for (const r of t.running)
        if (r > lowest) out.fifoViolations.push(`ticket ${r} ran while ${lowest} waited`);
      out.samples += 1;
      if (gate && !out.sawFull && running === gate.limit && t.waiting.length === ids.length - gate.limit) {
        out.sawFull = true;
        writeFileSync(gate.path, "");
      }
      if (gate && running > gate.limit) break;
      await Bun.sleep(5);
    }
  } finally {
    if (gate && !existsSync(gate.path)) writeFileSync(gate.path, "");
  }
  return out;
}
