// Parses observe.sh's report (src/wrapper/host/observe.sh documents it: many job dirs in one round trip) and turns
// one job's part into an Observation.
import type { Observation } from "../../core/model/observation.ts";
import { parseExitRecord, parseHeartbeat, parseQueued, parseStarted } from "../../wrapper/protocol.ts";
import type { WrapperIdentity } from "../host/job-host.ts";
import { observationFromRecords } from "../observation-from-records.ts";

export interface RemoteJobReport {
  missing: boolean;
  /** null when no wrapper pid is known yet. */
  alive: boolean | null;
  wrapperPid?: number;
  /** Field 22 of /proc/PID/stat when the process is alive and /proc exists. */
  procStart?: string;
  /** With an exit record while the wrapper lives: whether the command's own process still runs. */
  commandAlive?: boolean;
  files: Record<string, string>;
}

export interface ObserveReport {
  bootId: string | null;
  jobs: Map<string, RemoteJobReport>;
}

export function parseObserveReport(text: string): ObserveReport {
  const parts = text.split("\n@@");
  const head = parts[0] ?? "";
  const boot = /^boot=(.*)$/m.exec(head)?.[1]?.trim() ?? "";
  const jobs = new Map<string, RemoteJobReport>();
  let current: RemoteJobReport | null = null;
  for (const part of parts.slice(1)) {
    const nl = part.indexOf("\n");
    const first = nl < 0 ? part : part.slice(0, nl);
    const rest = nl < 0 ? "" : part.slice(nl + 1);
    if (first.startsWith("job ")) {
      current = { missing: false, alive: null, files: {} };
      jobs.set(first.slice(4), current);
      for (const line of rest.split("\n")) {
        if (line === "missing=1") current.missing = true;
        const m = /^alive=([01]) pid=(\d*) start=(\S*)$/.exec(line);
        if (m) {
          current.alive = m[1] === "1";
          if (m[2]) current.wrapperPid = Number(m[2]);
          if (m[3]) current.procStart = m[3];
        }
        const c = /^command_alive=([01])$/.exec(line);
        if (c) current.commandAlive = c[1] === "1";
      }
    } else if (first.startsWith("file ") && current) {
      current.files[first.slice(5)] = rest;
    }
  }
  return { bootId: boot === "" ? null : boot, jobs };
}

export function toObservation(
  known: WrapperIdentity,
  report: RemoteJobReport | undefined,
  bootIdNow: string | null,
): Observation {
  const started = report?.files.started !== undefined ? parseStarted(report.files.started) : null;
  const hb = report?.files.heartbeat !== undefined ? parseHeartbeat(report.files.heartbeat) : null;
  const exit = report?.files.exit !== undefined ? parseExitRecord(report.files.exit) : null;
  const queued = !started && report?.files.queued !== undefined ? parseQueued(report.files.queued) : null;
  let wrapperAlive: boolean | null = report?.alive ?? null;
  if (wrapperAlive === true) {
    // A live pid whose start time differs from the wrapper's is a reused pid: the wrapper is gone.
    const expected = known.procStart ?? started?.procStart;
    if (expected && report?.procStart && expected !== report.procStart) wrapperAlive = false;
  }
  if (report?.missing && known.wrapperPid) wrapperAlive = false;
  const leftovers = report?.files.leftovers ?? null;
  const commandAlive = report?.commandAlive;
  return observationFromRecords(
    { started, exit, heartbeat: hb, queued, leftovers },
    { wrapperAlive, bootIdNow, ...(commandAlive !== undefined ? { commandAlive } : {}) },
  );
}
