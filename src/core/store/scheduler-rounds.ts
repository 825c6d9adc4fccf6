// Owns the store's shared scheduler rounds, so the processes of one machine ask a scheduler once per interval between
// them: per key (a cluster), a lease held by the process running the round, the snapshot it wrote with its time, and
// the items (scheduler job IDs) each process watches, whose union the next round covers. Keys, items and snapshots are
// opaque text here: the backend that polls gives them meaning.
import type { Interest, SchedulerRound, SharedRounds } from "../backend/shared-rounds.ts";
import { Table } from "./connection.ts";

export type { Interest, SchedulerRound };

/** The store's side of shared rounds (JobStore.rounds), a table like the others (connection.ts `Table`). */
export class SchedulerRounds extends Table implements SharedRounds {
  round(key: string): SchedulerRound | null {
    return this.read(() => this.row(key));
  }

  private row(key: string): SchedulerRound | null {
    const r = this.db
      .query(
        "SELECT holder, lease_until_ms, at_ms, next_at_ms, snapshot_json FROM scheduler_rounds WHERE key = ?",
      )
      .get(key) as {
      holder: string | null;
      lease_until_ms: number;
      at_ms: number | null;
      next_at_ms: number | null;
      snapshot_json: string | null;
    } | null;
    if (r === null) return null;
    return {
      atMs: r.at_ms,
      nextAtMs: r.next_at_ms,
      snapshot: r.snapshot_json,
      holder: r.holder,
      leaseUntilMs: r.lease_until_ms,
    };
  }

  /** Records (or extends until untilMs) what `owner` watches under `key`. */
  registerInterest(key: string, owner: string, items: readonly Interest[], untilMs: number): void {
    if (items.length === 0) return;
    this.write(() => this.upsertInterest(key, owner, items, untilMs));
  }

  private upsertInterest(key: string, owner: string, items: readonly Interest[], untilMs: number): void {
    const q = this.db.query(
      `INSERT INTO scheduler_interest (key, item, owner, since_ms, until_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(key, item, owner) DO UPDATE SET
         until_ms = MAX(until_ms, excluded.until_ms), since_ms = MIN(since_ms, excluded.since_ms)`,
    );
    for (const i of items) q.run(key, i.item, owner, Math.floor(i.sinceMs), Math.floor(untilMs));
  }

  /** `owner` no longer watches these items (they finished). */
  dropInterest(key: string, owner: string, items: readonly string[]): void {
    if (items.length === 0) return;
    this.write(() => {
      const q = this.db.query("DELETE FROM scheduler_interest WHERE key = ? AND item = ? AND owner = ?");
      for (const item of items) q.run(key, item, owner);
    });
  }

  /**
   * Takes the lease for one round, in one transaction with `owner`'s interests: the union of every process's
   * unexpired interests when `owner` may run it; null when another process holds an unexpired lease, or a round
   * newer than the one the caller saw (`seenAtMs`) was written meanwhile (read it instead).
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
  ): Interest[] | null {
    return this.write(() => {
      const r = this.row(key);
      if (r !== null) {
        if (r.holder !== null && r.holder !== owner && r.leaseUntilMs > opts.nowMs) return null;
        if (r.atMs !== null && (opts.seenAtMs === null || r.atMs > opts.seenAtMs)) return null;
      }
      this.upsertInterest(key, owner, opts.mine, opts.mineUntilMs);
      this.db.query("DELETE FROM scheduler_interest WHERE key = ? AND until_ms < ?").run(key, opts.nowMs);
      this.db
        .query(
          `INSERT INTO scheduler_rounds (key, holder, lease_until_ms) VALUES (?, ?, ?)
           ON CONFLICT(key) DO UPDATE SET holder = excluded.holder, lease_until_ms = excluded.lease_until_ms`,
        )
        .run(key, owner, Math.floor(opts.nowMs + opts.leaseMs));
      const rows = this.db
        .query(
          "SELECT item, MIN(since_ms) AS since_ms FROM scheduler_interest WHERE key = ? GROUP BY item ORDER BY item",
        )
        .all(key) as { item: string; since_ms: number }[];
      return rows.map((x) => ({ item: x.item, sinceMs: x.since_ms }));
    });
  }

  /**
   * Writes a round's snapshot and releases `owner`'s lease. A round older than the stored one (its lease expired and
   * another process ran a newer round meanwhile) is not written: false.
   */
  publishRound(
    key: string,
    owner: string,
    round: { atMs: number; nextAtMs: number; snapshot: string },
  ): boolean {
    return this.write(() => {
      const r = this.row(key);
      if (r?.holder === owner) {
        this.db.query("UPDATE scheduler_rounds SET holder = NULL, lease_until_ms = 0 WHERE key = ?").run(key);
      }
      if (r !== null && r.atMs !== null && r.atMs >= round.atMs) return false;
      this.db
        .query(
          `INSERT INTO scheduler_rounds (key, at_ms, next_at_ms, snapshot_json) VALUES (?, ?, ?, ?)
           ON CONFLICT(key) DO UPDATE SET
             at_ms = excluded.at_ms, next_at_ms = excluded.next_at_ms, snapshot_json = excluded.snapshot_json`,
        )
        .run(key, Math.floor(round.atMs), Math.floor(round.nextAtMs), round.snapshot);
      return true;
    });
  }

  /** How many processes watch something under `key` now (doctor). */
  watchers(key: string, nowMs: number): number {
    return this.read(
      () =>
        (
          this.db
            .query(
              "SELECT COUNT(DISTINCT owner) AS n FROM scheduler_interest WHERE key = ? AND until_ms >= ?",
            )
            .get(key, nowMs) as { n: number }
        ).n,
    );
  }
}
