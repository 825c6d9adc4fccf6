// What a backend that polls a scheduler may ask of the store: rounds shared by this machine's processes (a lease and
// a snapshot per key, each process's interests). store/scheduler-rounds.ts keeps them; keys, items and snapshots are
// the backend's text.

export interface SchedulerRound {
  /** When the last round started (ms since epoch); null before the first. */
  atMs: number | null;
  /** When the next regular round is due (ms since epoch), as the last round's poller computed it (backoff included). */
  nextAtMs: number | null;
  /** The last round's answer, as its poller wrote it. */
  snapshot: string | null;
  /** The process running a round now (its lease), or null. */
  holder: string | null;
  leaseUntilMs: number;
}

export interface Interest {
  item: string;
  /** The earliest time the item may date from (e.g. a job's submission), for the scheduler's query window. */
  sinceMs: number;
}

/** The store's shared rounds (JobStore.rounds), as a poller uses them. */
export interface SharedRounds {
  /** The key's last round, or null before the first. */
  round(key: string): SchedulerRound | null;
  /** Records that `owner` watches `items` until `untilMs`. */
  registerInterest(key: string, owner: string, items: readonly Interest[], untilMs: number): void;
  dropInterest(key: string, owner: string, items: readonly string[]): void;
  /**
   * Takes the key's lease for a round when none is held (or it expired) and no round newer than `seenAtMs` was
   * written meanwhile: the items every process watches, or null (another process runs it, or a newer one exists).
   */
  claimRound(
    key: string,
    owner: string,
    opts: {
      nowMs: number;
      leaseMs: number;
      seenAtMs: number | null;
      mine: readonly Interest[];
      mineUntilMs: number;
    },
  ): Interest[] | null;
  /** Writes a round's answer and releases the lease; false when a newer round was written meanwhile. */
  publishRound(
    key: string,
    owner: string,
    round: { atMs: number; nextAtMs: number; snapshot: string },
  ): boolean;
}
