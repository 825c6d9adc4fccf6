// A quiet job's CPU by its age (bench/idle.ts --by-age): each job's two sessions read at its own ages (counted from its
// started record), so the first minute (the wrapper's start and its checks backing off) and the later minutes are
// told apart; only the wrappers' own processes count (other load on the machine does not).
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { allProcs, jobSessions } from "./proc-cpu.ts";

const HZ = 100; // USER_HZ on Linux

export interface AgeRow {
  what: string;
  value: string;
}

/**
 * Submits `n` quiet jobs and reads their wrappers' CPU at ages 60, 120 … `minutes`×60 s: the ms of CPU per second of
 * each minute of age, per job. `submit` starts one job and answers its ID; its directory is `jobsDir`/ID.
 */
export async function cpuByAge(opts: {
  n: number;
  minutes: number;
  jobsDir: string;
  submit: (argv: string[]) => Promise<string>;
  cancel: (id: string) => Promise<unknown>;
}): Promise<AgeRow[]> {
  const ids: string[] = [];
  // batches of 10: the jobs start within a few seconds of each other; each is read at its own age anyway
  for (let i = 0; i < opts.n; i += 10) {
    const batch = Math.min(10, opts.n - i);
    ids.push(...(await Promise.all(Array.from({ length: batch }, () => opts.submit(["sleep", "3600"])))));
  }
  try {
    const jobs = ids.map((id) => ({ dir: join(opts.jobsDir, id), startedMs: 0, sessions: [] as number[] }));
    for (const j of jobs) {
      for (let k = 0; k < 600 && j.startedMs === 0; k++) {
        try {
          readFileSync(join(j.dir, "started"));
          j.startedMs = statSync(join(j.dir, "started")).mtimeMs;
          j.sessions = jobSessions(j.dir);
        } catch {
          await Bun.sleep(50);
        }
      }
      if (j.startedMs === 0) throw new Error(`${j.dir}: no started record after 30 s`);
    }
    // ticks[job][m]: the job's sessions' CPU ticks (their own and what they reaped) at age (m+1) minutes
    const ticks = jobs.map(() => [] as number[]);
    const last = Math.max(...jobs.map((j) => j.startedMs)) + opts.minutes * 60_000;
    while (ticks.some((t) => t.length < opts.minutes)) {
      const now = performance.timeOrigin + performance.now();
      const due = jobs.flatMap((j, i) =>
        ticks[i]!.length < opts.minutes && now >= j.startedMs + (ticks[i]!.length + 1) * 60_000 ? [i] : [],
      );
      if (due.length > 0) {
        const procs = allProcs();
        for (const i of due) {
          const s = new Set(jobs[i]!.sessions);
          ticks[i]!.push(procs.filter((p) => s.has(p.sid)).reduce((sum, p) => sum + p.ticks, 0));
        }
      }
      if (now > last + 30_000)
        throw new Error("the age readings fell behind by 30 s (is the machine swapping?)");
      await Bun.sleep(100);
    }
    return Array.from({ length: opts.minutes }, (_, m) => {
      const cpuMs = ticks.reduce((sum, t) => sum + (t[m]! - (m === 0 ? 0 : t[m - 1]!)), 0) * (1000 / HZ);
      return {
        what: `local: CPU per quiet job at age ${m}–${m + 1} min${m === 0 ? " (the wrapper's start included)" : ""}`,
        value: `${(cpuMs / jobs.length / 60).toFixed(3)} ms/s`,
      };
    });
  } finally {
    for (const id of ids) await opts.cancel(id);
  }
}
