// The two writes that carry the job model's rules into the jobs table: a launch reserved exactly once (replays,
// conflicts, the duplicate guard), and a state change the lifecycle allows, with its result when terminal.
import { AwaitlessError, hint } from "../model/errors.ts";
import { isTerminal, type JobState } from "../model/job.ts";
import { canTransition } from "../rules/transitions.ts";
import { ACTIVE_SQL, type Connection, nowIso } from "./connection.ts";
import {
  type JobRow,
  type NewJob,
  type Reservation,
  rowToJob,
  type StoredJob,
  type TransitionPatch,
} from "./rows.ts";
import type { SQLQueryBindings } from "./sqlite.ts";

/**
 * Binds client_request_id (if any) to a fingerprint and creates the job row, all in one transaction,
 * before any side effect. The duplicate guard (same active_key still active) is checked in the same
 * transaction unless allowDuplicate.
 */
export function reserveJob(conn: Connection, job: NewJob, allowDuplicate: boolean): Reservation {
  return conn.write(() => {
    if (job.client_request_id) {
      const prior = conn.db
        .query("SELECT * FROM jobs WHERE client_request_id = ?")
        .get(job.client_request_id) as JobRow | null;
      if (prior) {
        const stored = rowToJob(prior);
        return prior.fingerprint === job.fingerprint
          ? { kind: "replay", job: stored }
          : { kind: "conflict", job: stored };
      }
    }
    if (!allowDuplicate) {
      const dup = conn.db
        .query(`SELECT * FROM jobs WHERE active_key = ? AND state IN ${ACTIVE_SQL} LIMIT 1`)
        .get(job.active_key) as JobRow | null;
      if (dup) return { kind: "duplicate", job: rowToJob(dup) };
    }
    conn.db
      .query(
        `INSERT INTO jobs (job_id, name, backend, host, queue, state, spec_json, fingerprint, client_request_id,
           active_key, created_at, job_dir, launcher_json)
         VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      )
      .run(
        job.job_id,
        job.spec.name,
        job.spec.backend,
        job.spec.host,
        job.spec.queue,
        job.state,
        JSON.stringify(job.spec),
        job.fingerprint,
        job.client_request_id,
        job.active_key,
        job.created_at,
        job.job_dir,
        job.launcher ? JSON.stringify(job.launcher) : null,
      );
    conn.db
      .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
      .run(job.job_id, null, job.state, job.created_at, "created");
    for (const d of job.spec.after ?? []) {
      conn.db
        .query("INSERT INTO job_dependencies (job_id, parent_id, condition) VALUES (?,?,?)")
        .run(job.job_id, d.job_id, d.on);
    }
    return {
      kind: "created",
      job: rowToJob(conn.db.query("SELECT * FROM jobs WHERE job_id = ?").get(job.job_id) as JobRow),
    };
  });
}

/**
 * Moves a job to `to` if the lifecycle allows it from its current state, re-read inside the transaction.
 * A terminal transition writes the state, its history row, its completion event and the result snapshot
 * in this one transaction, so a racing writer can never overwrite it.
 */
export function transitionJob(
  conn: Connection,
  jobId: string,
  to: JobState,
  patch: TransitionPatch = {},
): { changed: boolean; job: StoredJob } {
  return conn.write(() => {
    const row = conn.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow | null;
    if (!row) throw new AwaitlessError("not_found", `no job ${jobId}`, hint("find_job_id"));
    const from = row.state as JobState;
    const at = nowIso();
    if (!canTransition(from, to)) {
      if (patch.backend_id && !isTerminal(from)) {
        conn.db
          .query("UPDATE jobs SET backend_id_json = ? WHERE job_id = ?")
          .run(JSON.stringify(patch.backend_id), jobId);
      }
      return { changed: false, job: rowToJob(row) };
    }
    const sets: string[] = ["state = ?"];
    const args: SQLQueryBindings[] = [to];
    if (patch.status_message !== undefined) {
      sets.push("status_message = ?");
      args.push(patch.status_message);
    }
    if (patch.started_at && !row.started_at) {
      sets.push("started_at = ?");
      args.push(patch.started_at);
    }
    if (patch.backend_id) {
      sets.push("backend_id_json = ?");
      args.push(JSON.stringify(patch.backend_id));
    }
    if (isTerminal(to)) {
      const t = patch.terminal;
      if (!t) throw new Error("a terminal transition needs its result");
      sets.push(
        "finished_at = ?",
        "exit_code = ?",
        "signal = ?",
        "reason = ?",
        "stdout_bytes = ?",
        "stderr_bytes = ?",
        "result_json = ?",
        "result_sha256 = ?",
        "active_key = NULL",
        "status_message = NULL",
      );
      args.push(
        t.finished_at,
        t.exit_code,
        t.signal,
        t.reason,
        t.stdout_bytes,
        t.stderr_bytes,
        t.result_json,
        t.result_sha256,
      );
    }
    args.push(jobId);
    conn.db.query(`UPDATE jobs SET ${sets.join(", ")} WHERE job_id = ?`).run(...args);
    conn.db
      .query("INSERT INTO state_history (job_id, from_state, to_state, at, reason) VALUES (?,?,?,?,?)")
      .run(jobId, from, to, at, patch.historyReason ?? null);
    if (isTerminal(to)) {
      conn.db
        .query("INSERT INTO completions (job_id, state, finished_at, observed_at) VALUES (?,?,?,?)")
        .run(jobId, to, patch.terminal!.finished_at, at);
    }
    return {
      changed: true,
      job: rowToJob(conn.db.query("SELECT * FROM jobs WHERE job_id = ?").get(jobId) as JobRow),
    };
  });
}
