// Continuous sampling of a data directory's queue (running/ and waiting/ entries) and of its jobs' wrapper files,
// for the end-to-end queue tests: how many ran at once, and whether admission ever overtook a waiting job.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface QueueSample {
  samples: number;
  maxRunningEntries: number;
  maxRunningCommands: number;
  fifoViolations: string[];
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
 * Samples until `done()` resolves true. Commands running = started record and no exit record (all started read
 * first, so the count never overstates); FIFO: no running entry may hold a later ticket than one still waiting
 * (running read before waiting, so the waiting one was waiting at that moment too).
 */
export async function sampleQueue(
  dataDir: string,
  jobIds: () => string[],
  done: () => Promise<boolean> | boolean,
  timeoutMs = 90_000,
): Promise<QueueSample> {
  const root = join(dataDir, "queues");
  const out: QueueSample = { samples: 0, maxRunningEntries: 0, maxRunningCommands: 0, fifoViolations: [] };
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`queue sampling: jobs not done after ${timeoutMs} ms`);
    const t = tickets(root);
    out.maxRunningEntries = Math.max(out.maxRunningEntries, t.running.length);
    const dirs = jobIds().map((id) => join(dataDir, "jobs", id));
    const started = dirs.filter((d) => existsSync(join(d, "started")));
    out.maxRunningCommands = Math.max(
      out.maxRunningCommands,
      started.filter((d) => !existsSync(join(d, "exit"))).length,
    );
    const lowest = Math.min(...t.waiting);
    for (const r of t.running)
      if (r > lowest) out.fifoViolations.push(`ticket ${r} ran while ${lowest} waited`);
    out.samples += 1;
    await Bun.sleep(5);
  }
  return out;
}
