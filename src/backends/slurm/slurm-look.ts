// Owns what one look at a Slurm job reads: the wrapper's records in the job directory and Slurm's line for the job,
// from sacct for that job alone once the login side reads the exit record (the event path), else the shared round.
import type { ExitInfo, HeartbeatInfo, StartedInfo } from "../../core/model/observation.ts";
import { FILES, parseExitRecord, parseHeartbeat, parseStarted } from "../../wrapper/protocol.ts";
import { observationFromRecords } from "../observation-from-records.ts";
import type { SlurmHost } from "./slurm-host.ts";
import { arrayTaskOf } from "./slurm-queries.ts";
import type { PollEntry } from "./slurm-round.ts";

export interface WrapperView {
  started: StartedInfo | null;
  exit: ExitInfo | null;
  heartbeat: HeartbeatInfo | null;
}

/**
 * The wrapper's record texts (null: no such file) through the mapping local and SSH jobs use: an exit record written
 * before the command started (cancelled during the batch script's start-up) has exit_code null, never 0.
 */
export function wrapperView(texts: {
  started: string | null;
  exit: string | null;
  heartbeat: string | null;
  leftovers?: string | null;
}): WrapperView {
  const o = observationFromRecords(
    {
      started: texts.started === null ? null : parseStarted(texts.started),
      exit: texts.exit === null ? null : parseExitRecord(texts.exit),
      heartbeat: texts.heartbeat === null ? null : parseHeartbeat(texts.heartbeat),
      queued: null,
      leftovers: texts.leftovers ?? null,
    },
    { wrapperAlive: null, bootIdNow: null },
  );
  return { started: o.started, exit: o.exit, heartbeat: o.heartbeat };
}

async function readWrapper(h: SlurmHost, dir: string): Promise<WrapperView> {
  const read = (name: string) => h.runner.readFile(`${dir}/${name}`, 4096);
  const [started, exit, heartbeat] = await Promise.all([
    read(FILES.started),
    read(FILES.exit),
    read(FILES.heartbeat),
  ]);
  // the processes the command left, listed once it has ended with some
  const left = exit !== null && /^leftovers=[1-9]/m.test(exit) ? await read(FILES.leftovers) : null;
  return wrapperView({ started, exit, heartbeat, leftovers: left });
}

export const NONE: WrapperView = { started: null, exit: null, heartbeat: null };

type Looked =
  | { wrapper: WrapperView; entry: PollEntry; via: "watch" | "poll" }
  | { wrapper: WrapperView; error: string };

/**
 * The wrapper's records and Slurm's line for the job. The event path: once the login side reads the exit record
 * (also when it appears while waiting for a round), sacct for this job alone answers; otherwise the shared round.
 */
export async function look(
  h: SlurmHost,
  id: string,
  sinceMs: number,
  dir: string | undefined,
): Promise<Looked> {
  // an array task is followed by the shared rounds alone: the event path's sacct per job would be one per task
  const events = h.events.on && dir !== undefined && arrayTaskOf(id) === undefined;
  let wrapper = events && dir ? await readWrapper(h, dir).catch(() => NONE) : NONE;
  for (;;) {
    if (events && wrapper.exit !== null) {
      const c = await h.events.confirm(id, sinceMs);
      if (c.error === undefined) return { wrapper, entry: c.entry ?? {}, via: "watch" };
    }
    const askedAt = Date.now();
    const stop = new AbortController();
    const viewed = h.poller.view(id, sinceMs);
    const watching = events && dir && wrapper.exit === null;
    const snap = await Promise.race([
      viewed,
      ...(watching ? [h.events.exitIn(dir, stop.signal).then(() => "exit" as const)] : []),
    ]);
    stop.abort();
    // records read just now still stand when the round's view came at once (the last round was fresh)
    if (!events || snap === "exit" || Date.now() - askedAt > 100)
      wrapper = dir ? await readWrapper(h, dir).catch(() => NONE) : NONE;
    if (snap === "exit" && wrapper.exit !== null) continue;
    const s = snap === "exit" ? await viewed : snap;
    if (s.error !== undefined) return { wrapper, error: s.error };
    const entry = s.rows.get(id) ?? {};
    if (dir) h.events.judgeSharing(dir, id, entry, wrapper.started !== null);
    return { wrapper, entry, via: "poll" };
  }
}
