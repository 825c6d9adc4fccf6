// The store schema: one migration per PRAGMA user_version step. Append new steps; never edit a released one.

export const MIGRATIONS: string[] = [
  `CREATE TABLE jobs (
     job_id TEXT PRIMARY KEY,
     name TEXT,
     backend TEXT NOT NULL,
     host TEXT,
     queue TEXT,
     state TEXT NOT NULL,
     spec_json TEXT NOT NULL,
     fingerprint TEXT NOT NULL,
     client_request_id TEXT UNIQUE,
     active_key TEXT,
     created_at TEXT NOT NULL,
     started_at TEXT,
     finished_at TEXT,
     job_dir TEXT NOT NULL,
     backend_id_json TEXT,
     status_message TEXT,
     cancel_requested_at TEXT,
     exit_code INTEGER,
     signal TEXT,
     reason TEXT,
     stdout_bytes INTEGER,
     stderr_bytes INTEGER,
     result_json TEXT,
     result_sha256 TEXT
   );
   CREATE INDEX jobs_state ON jobs(state, job_id);
   CREATE INDEX jobs_name ON jobs(name, job_id);
   CREATE INDEX jobs_host ON jobs(host, job_id);
   CREATE INDEX jobs_queue ON jobs(queue, job_id);
   CREATE INDEX jobs_active_key ON jobs(active_key) WHERE active_key IS NOT NULL;
   CREATE TABLE state_history (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     job_id TEXT NOT NULL,
     from_state TEXT,
     to_state TEXT NOT NULL,
     at TEXT NOT NULL,
     reason TEXT
   );
   CREATE INDEX state_history_job ON state_history(job_id, seq);
   CREATE TABLE completions (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     job_id TEXT NOT NULL UNIQUE,
     state TEXT NOT NULL,
     finished_at TEXT NOT NULL,
     observed_at TEXT NOT NULL
   );`,
  // 2: named queues, per target ("local" or a host name); jobs name theirs in jobs.queue.
  `CREATE TABLE queues (
     name TEXT NOT NULL,
     target TEXT NOT NULL,
     concurrency INTEGER NOT NULL CHECK (concurrency >= 1),
     created_at TEXT NOT NULL,
     PRIMARY KEY (name, target)
   );`,
  // 3: small facts about the store itself (key/value), e.g. when an automatic gc last started.
  `CREATE TABLE store_meta (
     key TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
  // 4: the process that reserved (or last claimed) a job's launch, so a retry can tell an abandoned launch.
  "ALTER TABLE jobs ADD COLUMN launcher_json TEXT;",
  // 5: how long a job has been waited on, summed over every wait that ended (the wait answer's waited_seconds).
  "ALTER TABLE jobs ADD COLUMN waited_ms INTEGER NOT NULL DEFAULT 0;",
  // 6: scheduler rounds shared by the processes of this machine (core/store/scheduler-rounds.ts): per key (a cluster),
  // the lease of the process running the round and the last round's snapshot; the items each process watches.
  `CREATE TABLE scheduler_rounds (
     key TEXT PRIMARY KEY,
     holder TEXT,
     lease_until_ms INTEGER NOT NULL DEFAULT 0,
     at_ms INTEGER,
     next_at_ms INTEGER,
     snapshot_json TEXT
   );
   CREATE TABLE scheduler_interest (
     key TEXT NOT NULL,
     item TEXT NOT NULL,
     owner TEXT NOT NULL,
     since_ms INTEGER NOT NULL,
     until_ms INTEGER NOT NULL,
     PRIMARY KEY (key, item, owner)
   );`,
  // 7: job dependencies (--after): one row per child and parent, so a parent's dependents are one indexed read.
  `CREATE TABLE job_dependencies (
     job_id TEXT NOT NULL,
     parent_id TEXT NOT NULL,
     condition TEXT NOT NULL CHECK (condition IN ('ok', 'any', 'failed')),
     PRIMARY KEY (job_id, parent_id)
   );
   CREATE INDEX job_dependencies_parent ON job_dependencies(parent_id, job_id);`,
  // 8: job arrays (core/store/array-table.ts): the array (its request, indices, throttle) and one row per task (its job).
  `CREATE TABLE job_arrays (
     array_id TEXT PRIMARY KEY,
     client_request_id TEXT UNIQUE,
     request_json TEXT NOT NULL,
     spec_text TEXT NOT NULL,
     indices_json TEXT NOT NULL,
     throttle INTEGER NOT NULL,
     backend TEXT NOT NULL,
     host TEXT,
     queue TEXT,
     created_at TEXT NOT NULL
   );
   CREATE TABLE job_array_tasks (
     array_id TEXT NOT NULL,
     idx INTEGER NOT NULL,
     job_id TEXT NOT NULL UNIQUE,
     PRIMARY KEY (array_id, idx)
   );`,
  // 9: retries (src/core/retries/retry-policy.ts): the attempt a job row describes, when its next attempt may launch, and each
  // ended attempt's own record and immutable result.
  `ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
   ALTER TABLE jobs ADD COLUMN retry_at TEXT;
   CREATE TABLE job_attempts (
     job_id TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     job_dir TEXT NOT NULL,
     backend_id_json TEXT,
     state TEXT NOT NULL,
     reason TEXT,
     exit_code INTEGER,
     signal TEXT,
     launched_at TEXT,
     started_at TEXT,
     finished_at TEXT NOT NULL,
     result_json TEXT NOT NULL,
     result_sha256 TEXT NOT NULL,
     PRIMARY KEY (job_id, attempt)
   );`,
];

/** The schema version a fresh or migrated database ends at (PRAGMA user_version). */
export const SCHEMA_VERSION = MIGRATIONS.length;
