// Process facts on this machine: liveness with PID-reuse protection, start times, the boot ID.
import { readFileSync } from "node:fs";

/** Field 22 of /proc/PID/stat (start time in clock ticks since boot), or null off Linux. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

/** Alive, and (when known) the same process that was started: a reused PID has another start time. */
export function isProcessAlive(pid: number, expectStart: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (expectStart) {
    const now = processStartTime(pid);
    if (now !== null && now !== expectStart) return false;
    if (isZombie(pid)) return false;
  }
  return true;
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

let bootId: string | null | undefined;

export function localBootId(): string | null {
  if (bootId === undefined) {
    try {
      bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
    } catch {
      bootId = null;
    }
  }
  return bootId;
}
