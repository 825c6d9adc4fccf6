// The wrapper's documented check and heartbeat intervals, and the one lost-after threshold every reader derives from them
// (core owns them so that reconcile can use them; wrapper/spec-render.ts repeats the defaults, a test checks they agree).

/** Seconds between heartbeat rewrites while the command is quiet (one is also written whenever a check sees output). */
export const HEARTBEAT_SECONDS = 30;

/**
 * The heartbeat interval of a local job. Its wrapper is checked by its process (signal 0 and its start time in /proc),
 * never by its heartbeat, so while the command is quiet the heartbeat is rewritten every two minutes rather than every
 * 30 s: one `mv` every 120 s instead of four (about a third of what a quiet job costs). Its time then only dates the
 * last sign of a wrapper found killed (a lost job's finished_at), and a check that sees output still writes one at once.
 */
export const LOCAL_HEARTBEAT_SECONDS = 120;

/** Longest gap between two size checks of the logs and progress file while nothing changes (AWL_CHECK_MAX). */
export const CHECK_MAX_SECONDS = 15;

/** Heartbeat interval assumed for a record without `interval=` (wrappers before it rewrote it every tick). */
export const LEGACY_HEARTBEAT_SECONDS = 5;

/**
 * Seconds after its last heartbeat that a running job whose wrapper cannot be checked directly (Slurm, a host
 * without /proc) counts as lost: three intervals (two missed rewrites plus a late one on a loaded machine) and ten
 * seconds of slack for the reader's clock. 100 s with the default interval.
 */
export function lostAfterSeconds(heartbeatSeconds: number = HEARTBEAT_SECONDS): number {
  return 3 * heartbeatSeconds + 10;
}
