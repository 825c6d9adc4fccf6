// One mapping from the wrapper's parsed records (read locally or over SSH) to the engine's Observation.
import type { Observation } from "../core/backend.ts";
import type { ExitRecord, HeartbeatRecord, QueuedRecord, StartedRecord } from "../wrapper/protocol.ts";
import { toQueuedInfo } from "./local/local-queue.ts";

export interface WrapperRecords {
  started: StartedRecord | null;
  exit: ExitRecord | null;
  heartbeat: HeartbeatRecord | null;
  queued: QueuedRecord | null;
}

export interface ObservationFacts {
  wrapperAlive: boolean | null;
  bootIdNow: string | null;
  /** When the record files' times are known more precisely than whole seconds (local mtimes). */
  startedAt?: (epochSeconds: number) => string;
  finishedAt?: (epochSeconds: number) => string;
}

const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();

export function observationFromRecords(r: WrapperRecords, facts: ObservationFacts): Observation {
  const { started, exit, heartbeat: hb, queued } = r;
  return {
    started: started
      ? {
          wrapper_pid: started.wrapperPid,
          pid: started.pid,
          pgid: started.pgid ?? started.pid,
          boot_id: started.bootId ?? null,
          started_at: (facts.startedAt ?? iso)(started.startedAtEpochSeconds),
        }
      : null,
    exit: exit
      ? {
          exit_code: exit.exitCode ?? null,
          signal: exit.signal ?? null,
          reason: exit.reason,
          finished_at: (facts.finishedAt ?? iso)(exit.finishedAtEpochSeconds),
          descendants_alive: exit.descendantsAlive,
          ...(exit.noSpace ? { no_space: true } : {}),
          ...(exit.dependency ? { dependency: exit.dependency } : {}),
        }
      : null,
    wrapperAlive: facts.wrapperAlive,
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
