// The launch owner on this machine: this process's identity (pid, start time, boot ID, host name), and whether a
// recorded owner is certainly gone — dead, its PID reused, or this machine rebooted since it reserved the launch.
import type { LaunchOwner, LaunchOwners } from "../../core/rules/launch-owner.ts";
import { nodeOs } from "../../core/util/node-os.ts";
import { isProcessAlive, localBootId, processStartTime } from "./proc.ts";

export const localLaunchOwners: LaunchOwners = {
  self(): LaunchOwner {
    return {
      pid: process.pid,
      start: processStartTime(process.pid),
      boot: localBootId(),
      host: hostname(),
      at: new Date().toISOString(),
    };
  },
  isGone(owner: LaunchOwner): boolean {
    // a store shared between machines: a process elsewhere cannot be checked from here
    if (owner.host !== hostname()) return false;
    const boot = localBootId();
    if (owner.boot && boot) {
      if (owner.boot !== boot) return true;
    } else if (owner.boot || boot) return false;
    if (owner.pid === process.pid && owner.start === processStartTime(process.pid)) return false;
    return !isProcessAlive(owner.pid, owner.start);
  },
};

/** This machine's name; node:os is loaded when a launch first needs it. */
function hostname(): string {
  return nodeOs().hostname();
}
