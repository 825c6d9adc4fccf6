// What /proc says of a process, for tests that check a process from outside: its start time, and whether it is
// alive and was never signalled.
import { readFileSync } from "node:fs";

/** Field N (1-based, as proc(5) numbers them; from 3 on) of /proc/PID/stat, or undefined when it cannot be read. */
export function statField(pid: number | "self", n: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) is in parentheses and may hold spaces: split after the last ')'
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[n - 3];
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat: the process's start time (clock ticks since boot); a reused pid has another. */
export function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

/** Alive, not a zombie, no signal pending. */
export function untouched(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return !/^State:\s+Z/m.test(status) && /^SigPnd:\s+0+$/m.test(status) && /^ShdPnd:\s+0+$/m.test(status);
  } catch {
    return false;
  }
}
