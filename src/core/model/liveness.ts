// The wrapper's documented check and heartbeat intervals, and the one lost-after threshold every reader derives from them
// (core owns them so that reconcile can use them; wrapper/spec-render.ts repeats the defaults, a test checks they agree).

/** Seconds between heartbeat rewrites while the command is quiet (one is also written whenever a check sees output). */
export const HEARTBEAT_SECONDS = 30;

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
