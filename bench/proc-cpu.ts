// What processes cost, read from /proc: each process's CPU ticks (its own and its reaped children's), PSS, and the
// two sessions of a job (the wrapper's and the command's), for the idle benches.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface Proc {
  pid: number;
  ppid: number;
  sid: number;
  ticks: number; // utime + stime + cutime + cstime
}

export function readProc(pid: number): Proc | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(") ") + 2).split(" ");
    return {
      pid,
      ppid: Number(f[1]),
      sid: Number(f[3]),
      ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
    };
  } catch {
    return null;
  }
}

export function allProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) out.push(p);
  }
  return out;
}

export function pss(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** A job's sessions: the wrapper's (wrapper, monitor, the monitor's sleep) and the command's. */
export function jobSessions(dir: string): number[] {
  const text = readFileSync(join(dir, "started"), "utf8");
  const get = (k: string) => Number(new RegExp(`^${k}=(\\d+)$`, "m").exec(text)?.[1] ?? 0);
  return [get("wrapper_pid"), get("pid")].map((pid) => readProc(pid)?.sid ?? pid);
}
