// What gc reads and removes of the store: finished jobs by age and count, every job's directory (the quota), rows
// of removed jobs.
import type { JobState } from "../model/job.ts";
import { ACTIVE_SQL, Table } from "./connection.ts";
import { type JobRow, rowToJob, type StoredJob } from "./rows.ts";

export class GcTable extends Table {
  /** Terminal jobs eligible for gc: finished before `olderThan`, or beyond the newest `keep` terminal jobs. */
  candidates(olderThan: string | null, keep: number | null): StoredJob[] {
    const ids = new Set<string>();
    const rows: JobRow[] = [];
    this.read(() => {
      if (olderThan) {
        for (const r of this.db
          .query(`SELECT * FROM jobs WHERE state NOT IN ${ACTIVE_SQL} AND finished_at < ?`)
          .all(olderThan) as JobRow[]) {
          if (!ids.has(r.job_id)) {
            ids.add(r.job_id);
            rows.push(r);
          }
        }
      }
      if (keep !== null) {
        for (const r of this.db
          .query(`SELECT * FROM jobs WHERE state NOT IN ${ACTIVE_SQL} ORDER BY job_id DESC LIMIT -1 OFFSET ?`)
          .all(keep) as JobRow[]) {
          if (!ids.has(r.job_id)) {
            ids.add(r.job_id);
            rows.push(r);
          }
        }
      }
    });
    return rows.map(rowToJob);
  }

  /** Every job's local directory with its state and finish time (gc's store quota). */
  jobDirs(): { job_id: string; state: JobState; job_dir: string; finished_at: string | null }[] {
    return this.read(
      () =>
        this.db.query("SELECT job_id, state, job_dir, finished_at FROM jobs").all() as {
          job_id: string;
          state: JobState;
          job_dir: string;
          finished_at: string | null;
        }[],
    );
  }

  /** Deletes terminal jobs' rows (history too; completion events stay so cursors remain monotonic). */
  deleteTerminal(jobIds: string[]): number {
    return this.write(() => {
      let n = 0;
      for (const id of jobIds) {
        const res = this.db.query(`DELETE FROM jobs WHERE job_id = ? AND state NOT IN ${ACTIVE_SQL}`).run(id);
        if (res.changes > 0) {
          this.db.query("DELETE FROM state_history WHERE job_id = ?").run(id);
          this.db.query("DELETE FROM job_dependencies WHERE job_id = ?").run(id);
          this.db.query("DELETE FROM job_attempts WHERE job_id = ?").run(id);
          n++;
        }
      }
      return n;
    });
  }

  countJobs(): number {
    return this.read(() => (this.db.query("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n);
  }
}
