// store_meta: the store's own settings and clocks (the automatic gc's last start, notices shown once).
import { Table } from "./connection.ts";

export class MetaTable extends Table {
  /**
   * Claims the automatic gc when the last one started at least `intervalSeconds` ago: records `now` and returns
   * true, atomically, so that of many concurrent clients one starts it. A store that never had one starts its
   * clock here (false). A plain read decides the common case, so launches do not take the write lock for it.
   */
  claimAutoGc(intervalSeconds: number, now: Date = new Date()): boolean {
    // A value that does not parse (edited by hand) counts as due, so the clock restarts instead of stopping.
    const due = (value: string | undefined) => {
      if (value === undefined) return false;
      const at = Date.parse(value);
      return Number.isNaN(at) || now.getTime() - at >= intervalSeconds * 1000;
    };
    const last = this.get("auto_gc_at");
    if (last !== undefined && !due(last)) return false;
    return this.write(() => {
      const current = this.metaRow("auto_gc_at");
      if (current !== undefined && !due(current)) return false;
      this.setMetaRow("auto_gc_at", now.toISOString());
      return current !== undefined;
    });
  }

  /** A value of store_meta (undefined when unset). */
  get(key: string): string | undefined {
    return this.read(() => this.metaRow(key));
  }

  set(key: string, value: string): void {
    this.write(() => this.setMetaRow(key, value));
  }

  private metaRow(key: string): string | undefined {
    const row = this.db.query("SELECT value FROM store_meta WHERE key = ?").get(key) as {
      value: string;
    } | null;
    return row?.value;
  }

  private setMetaRow(key: string, value: string): void {
    this.db
      .query(
        "INSERT INTO store_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }
}
