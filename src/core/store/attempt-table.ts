// A retried job's attempts (migration 9): the ended ones kept with their results (job_attempts), the next one
// reserved and its launch claimed exactly once.
import { parseBackendId } from "../model/backend-id.ts";
import { type AttemptRecord, isTerminal, type JobState } from "../model/job.ts";
import type { LaunchOwner } from "../rules/launch-owner.ts";
import { nowIso, Table } from "./connection.ts";
import type { JobRow } from "./rows.ts";

export class AttemptTable extends Table {
  /**
   * Ends attempt `ended.attempt` of an active job and reserves the next one, in one transaction: the ended attempt's
   * record and result are kept (job_attempts), the row then describes the new attempt, queued and unlaunched until
   * `retryAt`. `moved` when another reader got there first; `refused` when the job ended or a cancel came.
   */
  begin(
    jobId: string,
    ended: AttemptRecord,
    next: { job_dir: string; retry_at: string; message: string },
  ): "reserved" | "moved" | "refused" {
    return this.write(() => {
      const row = this.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | null;
      if (!row) return "refused";
      if ((row.attempt ?? 1) !== ended.attempt) return "moved";
      if (row.cancel_requested_at !== null || isTerminal(row.state as JobState)) return "refused";
      this.db
        .query(
          `INSERT INTO job_attempts (job_id, attempt, job_dir, backend_id_json, state, reason, exit_code, signal,
             launched_at, started_at, finished_at, result_json, result_sha256) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        )
        .run(
          jobId,
          ended.attempt,
          ended.job_dir,
          ended.backend_id ? JSON.stringify(ended.backend_id) : null,
          ended.state,
          ended.reason,
          ended.exit_code,
          ended.signal,
          ended.launched_at,
          ended.started_at,
          ended.finished_at,
          ended.result_json,
          ended.result_sha256,
        );
      this.db
        .query(
          `UPDATE jobs SET state = 'queued', attempt = ?, job_dir = ?, backend_id_json = NULL, started_at = NULL,
             launcher_json = NULL, retry_at = ?, status_message = ? WHERE job_id = ?`,
        )
        .run(ended.attempt + 1, next.job_dir, next.retry_at, next.message, jobId);
      const history = this.db.query(
        "INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)",
      );
      history.run(
        jobId,
        row.state,
        ended.state,
        ended.finished_at,
        `attempt ${ended.attempt}: ${ended.reason ?? ended.state}`,
      );
      history.run(
        jobId,
        ended.state,
        "queued",
        nowIso(),
        `retry: attempt ${ended.attempt + 1} at ${next.retry_at}`,
      );
      return "reserved";
    });
  }

  /**
   * Reserves the launch of a retry's attempt for `owner`, exactly once: only while that attempt is unlaunched and
   * unclaimed, its time has come and no cancel was asked for. The job is then `starting` (`queued` with a queue).
   */
  claimLaunch(jobId: string, attempt: number, owner: LaunchOwner, state: "starting" | "queued"): boolean {
    return this.write(() => {
      const res = this.db
        .query(
          `UPDATE jobs SET launcher_json = ?, state = ?, retry_at = NULL WHERE job_id = ? AND attempt = ?
             AND launcher_json IS NULL AND backend_id_json IS NULL AND cancel_requested_at IS NULL AND state = 'queued'
             AND retry_at IS NOT NULL AND retry_at <= ?`,
        )
        .run(JSON.stringify(owner), state, jobId, attempt, owner.at);
      if (res.changes !== 1) return false;
      this.db
        .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
        .run(jobId, "queued", state, owner.at, `attempt ${attempt} launch reserved`);
      return true;
    });
  }

  /** The ended attempts of a retried job, first first (the current attempt is the job row itself). */
  list(jobId: string): AttemptRecord[] {
    return this.read(() =>
      (
        this.db
          .query(
            `SELECT a.*, j.backend AS backend FROM job_attempts a JOIN jobs j ON j.job_id = a.job_id
             WHERE a.job_id = ? ORDER BY a.attempt`,
          )
          .all(jobId) as (Omit<AttemptRecord, "backend_id"> & {
          backend: string;
          backend_id_json: string | null;
        })[]
      ).map(({ backend, backend_id_json, ...r }) => ({
        ...r,
        state: r.state as JobState,
        backend_id: backend_id_json
          ? parseBackendId(backend, backend_id_json, `${jobId} (attempt ${r.attempt})`)
          : null,
      })),
    );
  }
}
