// Owns one process's link to a cluster's rounds in the store (core/backend/shared-rounds.ts, kept by core/store/scheduler-rounds.ts): its name there, its
// interests, taking and releasing a round's lease, and reading and writing snapshots. A failing store never stops
// polling: every call here reports it, and the poller then asks the scheduler on its own.
import type { Interest, SharedRounds } from "../../core/backend/shared-rounds.ts";
import { type PollSnapshot, parseSnapshotText, snapshotText } from "./slurm-round.ts";

export type { SharedRounds };

let owners = 0;

export class SharedRoundLink {
  /** This process's name in the store's leases and interests. */
  readonly owner = `${process.pid}.${Date.now().toString(36)}.${++owners}`;

  constructor(
    private readonly rounds: SharedRounds,
    readonly key: string,
  ) {}

  /** Records what this process watches until untilMs; false when the store failed. */
  register(items: readonly Interest[], untilMs: number): boolean {
    return this.call(() => this.rounds.registerInterest(this.key, this.owner, items, untilMs)) !== undefined;
  }

  drop(ids: readonly string[]): void {
    this.call(() => this.rounds.dropInterest(this.key, this.owner, ids));
  }

  /** The store's last round when it started after `afterAtMs` (null: any). */
  latest(afterAtMs: number | null): PollSnapshot | undefined {
    const r = this.call(() => this.rounds.round(this.key));
    if (!r || r.atMs === null || r.nextAtMs === null || r.snapshot === null) return undefined;
    if (afterAtMs !== null && r.atMs <= afterAtMs) return undefined;
    return parseSnapshotText(r.snapshot, r.atMs, r.nextAtMs);
  }

  /**
   * Takes the round's lease with this process's interests: the union of every process's interests to ask about;
   * "someone" when another process runs it (or ran a newer one than `seenAtMs`); "store down" when the store failed.
   */
  claim(
    mine: readonly Interest[],
    mineUntilMs: number,
    seenAtMs: number | null,
    leaseMs: number,
  ): Interest[] | "someone" | "store down" {
    const got = this.call(() =>
      this.rounds.claimRound(this.key, this.owner, {
        nowMs: Date.now(),
        leaseMs,
        seenAtMs,
        mine,
        mineUntilMs,
      }),
    );
    return got === undefined ? "store down" : got === null ? "someone" : got;
  }

  /** Writes the round's snapshot and releases the lease. */
  publish(s: PollSnapshot): void {
    this.call(() =>
      this.rounds.publishRound(this.key, this.owner, {
        atMs: s.atMs,
        nextAtMs: s.nextAtMs,
        snapshot: snapshotText(s),
      }),
    );
  }

  private call<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch {
      return undefined;
    }
  }
}
