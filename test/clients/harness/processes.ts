// Process trees started by the client harness, stopped by PID (TERM, then KILL after a deadline).
import { readdirSync, readFileSync } from "node:fs";

export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // exited while we looked
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

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
