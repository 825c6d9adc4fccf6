// Process trees started by the client harness, stopped by PID (TERM, then KILL after a deadline).
import { pidAlive } from "../../helpers/cli.ts";
import { descendantPids } from "../../helpers/sshd.ts";

export const descendants = descendantPids;
export const alive = pidAlive;

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** TERMs `pid` and every descendant (listed before signalling), KILLs what is left after `graceMs`. */
export async function stopTree(pid: number, graceMs = 3_000): Promise<void> {
  const pids = [pid, ...descendants(pid)];
  for (const p of pids) signal(p, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (pids.some(alive)) {
    if (Date.now() > deadline) {
      for (const p of [...pids, ...pids.flatMap(descendants)]) signal(p, "SIGKILL");
      return;
    }
    await Bun.sleep(25);
  }
}
