// A connection sshd drops before the SSH handshake (MaxStartups, PerSourcePenalties): how often and how long to
// retry it, and the error when it keeps happening. Nothing has been sent to the host then, so a retry is always safe.

/** Raised by the handshake when the server closed the TCP connection before its identification or key exchange. */
export class StartupRefused extends Error {}

/** Attempts in all (the first one included). */
export const STARTUP_ATTEMPTS = 6;

/** The pause before attempt `attempt + 1`: exponential from 150 ms, capped at 2 s, jittered to ½–1½× so a burst spreads. */
export function startupBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(2000, 150 * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + random()));
}

/** The message and hint once every attempt was dropped. */
export function startupRefusal(
  label: string,
  where: string,
  attempts: number,
  elapsedMs: number,
  last: string,
): { message: string; hint: string } {
  return {
    message:
      `cannot connect to ${label} (${where}): its sshd closed the connection before the SSH handshake ` +
      `${attempts} times in ${(elapsedMs / 1000).toFixed(1)}s (last: ${last}); sshd does this past MaxStartups ` +
      "(too many connections still logging in at once; default 10:30:100) and, from OpenSSH 9.8, for an address " +
      "PerSourcePenalties is refusing (after failed or abandoned logins from it)",
    hint:
      "retry in a minute, with fewer connections at once (an --array submits every task over one connection); " +
      "the host's sshd log says which limit (`drop connection #N … past MaxStartups` or `… penalty: …`); " +
      "its administrator can raise MaxStartups or add this address to PerSourcePenaltyExemptList in sshd_config",
  };
}
