// Jobs brought from another store (Awaitless 0.8's): each added once with its history, and when finished its
// completion event and result snapshot; many in one transaction.
import { isTerminal } from "../model/job.ts";
import { nowIso, Table } from "./connection.ts";
import type { ImportedJob } from "./rows.ts";

export class ImportTable extends Table {
  /**
   * Adds a job brought from another store (its history; when finished, its completion event and result snapshot)
   * in one transaction; false when a job with that ID is already here (import is idempotent).
   */
  add(j: ImportedJob): boolean {
    return this.write(() => this.insert(j));
  }

  /**
   * Adds every job `source` yields in ONE transaction (nothing is stored when any of them fails); `each` learns,
   * for each, whether it was added (false: already here). `source` is read again should the transaction be retried
   * (after `start`, which resets what `each` gathered).
   */
  addAll<T extends { job: ImportedJob }>(
    source: () => Iterable<T>,
    start: () => void,
    each: (item: T, added: boolean) => void,
  ): void {
    this.write(() => {
      start();
      for (const item of source()) each(item, this.insert(item.job));
    });
  }

  private insert(j: ImportedJob): boolean {
    if (this.db.query("SELECT 1 FROM jobs WHERE job_id = ?").get(j.job_id)) return false;
    this.db
      .query(
        `INSERT INTO jobs (job_id, name, backend, host, queue, state, spec_json, fingerprint, created_at,
             started_at, finished_at, job_dir, backend_id_json, status_message, exit_code, signal, reason,
             stdout_bytes, stderr_bytes, result_json, result_sha256)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      )
      .run(
        j.job_id,
        j.spec.name,
        j.spec.backend,
        j.spec.host,
        j.spec.queue,
        j.state,
        JSON.stringify(j.spec),
        j.fingerprint,
        j.created_at,
        j.started_at,
        j.finished_at,
        j.job_dir,
        JSON.stringify(j.backend_id),
        j.status_message ?? null,
        j.exit_code,
        j.signal,
        j.reason,
        j.stdout_bytes,
        j.stderr_bytes,
        j.result_json,
        j.result_sha256,
      );
    for (const h of j.history) {
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(j.job_id, h.from_state, h.to_state, h.at, h.reason);
    }
    if (isTerminal(j.state)) {
      this.db
        .query("INSERT INTO completions (job_id, state, finished_at, observed_at) VALUES (?,?,?,?)")
        .run(j.job_id, j.state, j.finished_at, nowIso());
    }
    return true;
  }
}
