// One mapping from the wrapper's parsed records (read locally or over SSH) to the engine's Observation.

import type { Resources } from "../core/model/job.ts";
import type { ExitInfo, Observation } from "../core/model/observation.ts";
import {
  type ExitRecord,
  type HeartbeatRecord,
  parseLeftovers,
  type QueuedRecord,
  type StartedRecord,
} from "../wrapper/protocol.ts";
import { toQueuedInfo } from "./local/local-queue.ts";

export interface WrapperRecords {
  started: StartedRecord | null;
  exit: ExitRecord | null;
  heartbeat: HeartbeatRecord | null;
  queued: QueuedRecord | null;
  /** The `leftovers` file's text (the processes the command left), when read. */
  leftovers?: string | null;
}

export interface ObservationFacts {
  wrapperAlive: boolean | null;
  bootIdNow: string | null;
  /** The command's own process alive (looked at when an exit record is there while the wrapper lives). */
  commandAlive?: boolean | null;
  /** When the record files' times are known more precisely than whole seconds (local mtimes). */
  startedAt?: (epochSeconds: number) => string;
  finishedAt?: (epochSeconds: number) => string;
}

const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

export function observationFromRecords(r: WrapperRecords, facts: ObservationFacts): Observation {
  const { started, exit, heartbeat: hb, queued } = r;
  const startedAt = started ? (facts.startedAt ?? iso)(started.startedAtEpochSeconds) : null;
  // the command's end: its start plus how long it ran (the record's own time is whole seconds, and it is written
  // after what the command left was stopped)
  const finishedAt = (x: ExitRecord) =>
    x.ranCentis !== undefined && startedAt !== null
      ? new Date(Date.parse(startedAt) + x.ranCentis * 10).toISOString()
      : (facts.finishedAt ?? iso)(x.finishedAtEpochSeconds);
  return {
    started: started
      ? {
          wrapper_pid: started.wrapperPid,
          pid: started.pid,
          pgid: started.pgid ?? started.pid,
          boot_id: started.bootId ?? null,
          started_at: startedAt!,
          ...(started.procStart ? { proc_start: started.procStart } : {}),
          ...(started.tracking ? { tracking: started.tracking } : {}),
        }
      : null,
    exit: exit
      ? {
          exit_code: exit.exitCode ?? null,
          signal: exit.signal ?? null,
          reason: exit.reason,
          finished_at: finishedAt(exit),
          descendants_alive: exit.descendantsAlive,
          ...(exit.noSpace ? { no_space: true } : {}),
          ...(exit.dependency ? { dependency: exit.dependency } : {}),
          ...wholeJob(exit, r.leftovers ?? null),
        }
      : null,
    wrapperAlive: facts.wrapperAlive,
    ...(facts.commandAlive !== undefined ? { commandAlive: facts.commandAlive } : {}),
    // a queued file only means something before the command started
    ...(queued && !started ? { queued: toQueuedInfo(queued) } : {}),
    bootIdNow: facts.bootIdNow,
    heartbeat: hb
      ? {
          at: iso(hb.nowEpochSeconds),
          last_change_at: iso(hb.lastChangeEpochSeconds),
          stdout_bytes: hb.stdoutBytes,
          stderr_bytes: hb.stderrBytes,
          ...(hb.intervalSeconds ? { interval_seconds: hb.intervalSeconds } : {}),
        }
      : null,
  };
}

/** The exit record's whole-job lines (wrapper.sh "The whole job") and the `leftovers` listing, as ExitInfo fields. */
function wholeJob(exit: ExitRecord, listing: string | null): Partial<ExitInfo> {
  const out: Partial<ExitInfo> = {};
  if (exit.wrapperPid !== undefined)
    out.wrapper = { pid: exit.wrapperPid, proc_start: exit.procStart ?? null };
  if (exit.leftovers !== undefined) {
    out.leftovers = {
      count: exit.leftovers,
      action: exit.leftoversAction ?? "stopped",
      processes: exit.leftovers > 0 && listing !== null ? parseLeftovers(listing) : [],
      tracking: exit.tracking ?? null,
    };
  }
  if (exit.usage) out.resources = usageResources(exit.usage);
  return out;
}

const seconds = (micros: number | null) => (micros === null ? null : Math.round(micros / 1000) / 1000);

function usageResources(u: NonNullable<ExitRecord["usage"]>): Resources {
  return {
    cpu_user_seconds: seconds(u.cpuUserMicros),
    cpu_system_seconds: seconds(u.cpuSystemMicros),
    max_rss_bytes: u.maxRssBytes,
    oom_kills: u.oomKills,
    source: u.source,
  };
}
