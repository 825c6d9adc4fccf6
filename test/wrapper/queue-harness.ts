// Helpers for the wrapper's queue admission tests: a shared queue directory, jobs with distinct IDs that
// wait on it, and a sampler that checks the admission invariants continuously while jobs come and go.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readExitRecord, readQueued, readStarted, type SpecAdmission } from "../../src/wrapper/protocol.ts";
import { type Job, type JobOptions, newJob, type ShellCase, waitFor } from "./harness.ts";

export class QueueDir implements AsyncDisposable {
  readonly root = mkdtempSync(join(tmpdir(), "awl-queue-"));
  readonly jobs: Job[] = [];

  constructor(readonly lock: "auto" | "mkdir" = "auto") {}

  admission(queue: string | null, concurrency: number, resources: string[] = []): SpecAdmission {
    return { queue, concurrency, resources, dir: this.root, lock: this.lock };
  }

  /** Starts a job that waits on this directory; resolves once it holds a ticket (its `queued` file exists). */
  async start(shell: ShellCase, admission: SpecAdmission, options: JobOptions): Promise<Job> {
    const job = newJob();
    this.jobs.push(job);
    // each Job has its own ID (queue slots are named running/JOB_ID)
    job.start(shell, { admission, ...options });
    await waitFor(`${job.dir} to take a ticket`, () =>
      readQueued(job.dir) !== null || readExitRecord(job.dir) !== null ? true : undefined,
    );
    return job;
  }

  entries(kind: "running" | "waiting"): string[] {
    try {
      return readdirSync(join(this.root, kind));
    } catch {
      return [];
    }
  }

  /** Ticket of each running entry (read first), then of each waiting entry. */
  tickets(): { running: number[]; waiting: number[] } {
    const running: number[] = [];
    for (const name of this.entries("running")) {
      try {
        const m = /^ticket=(\d+)$/m.exec(readFileSync(join(this.root, "running", name), "utf8"));
        if (m) running.push(Number(m[1]));
      } catch {
        // released between the listing and the read
      }
    }
    const waiting = this.entries("waiting").map((name) => Number(name.split(".")[0]));
    return { running, waiting };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const job of this.jobs) await job[Symbol.asyncDispose]();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Jobs whose command has started and not yet exited, by their own files. Every started record is read before
 * any exit record, so each job counted was running during the whole read: the count never overstates.
 */
export function runningNow(jobs: Job[]): number {
  const started = jobs.filter((job) => readStarted(job.dir) !== null);
  return started.filter((job) => readExitRecord(job.dir) === null).length;
}

export interface SampleReport {
  samples: number;
  maxRunningEntries: number;
  maxRunningCommands: number;
  fifoViolations: string[];
}

/**
 * Samples until `done()` holds: the number of running/ entries, the number of started-but-unfinished commands,
 * and FIFO (one queue): no running entry may have a higher ticket than an entry still waiting. Running entries
 * are read before waiting ones, so a waiting entry seen later was also waiting when the running one was seen.
 */
export async function sample(q: QueueDir, jobs: Job[], done: () => boolean): Promise<SampleReport> {
  const report: SampleReport = {
    samples: 0,
    maxRunningEntries: 0,
    maxRunningCommands: 0,
    fifoViolations: [],
  };
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("sampling: the jobs did not finish within 60 s");
    const t = q.tickets();
    report.maxRunningEntries = Math.max(report.maxRunningEntries, t.running.length);
    report.maxRunningCommands = Math.max(report.maxRunningCommands, runningNow(jobs));
    const lowestWaiting = Math.min(...t.waiting);
    for (const r of t.running) {
      if (r > lowestWaiting) report.fifoViolations.push(`ticket ${r} ran while ${lowestWaiting} waited`);
    }
    report.samples += 1;
    await Bun.sleep(5);
  }
  return report;
}
