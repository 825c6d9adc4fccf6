// Pure parsers for the wrapper's key=value records (started, heartbeat, exit); shared by local and SSH readers.

/** Written once, just before the command execs. pid/pgid identify the command; proc_start guards PID reuse. */
export interface StartedRecord {
  protocol: number;
  wrapperPid: number;
  /** The wrapper's monitor (its child), woken with USR2 by a client's cancel; absent from older wrappers. */
  monitorPid?: number;
  pid: number;
  /** Absent when the command could not get its own process group (no setsid and no job control). */
  pgid?: number;
  /** Kernel boot ID (/proc/sys/kernel/random/boot_id); absent without /proc. */
  bootId?: string;
  /** Field 22 of /proc/<wrapper_pid>/stat (clock ticks since boot); absent without /proc. */
  procStart?: string;
  /** Field 22 of /proc/<pid>/stat: the command's start time, which tells it from a reused pid; absent without /proc. */
  pidStart?: string;
  startedAtEpochSeconds: number;
  /** How the job's processes are tracked (absent from older wrappers), and its cgroup when by cgroup. */
  tracking?: "cgroup" | "environment";
  cgroup?: string;
}

/** Rewritten every heartbeat interval while the command runs. Byte counts include dropped bytes. */
export interface HeartbeatRecord {
  nowEpochSeconds: number;
  stdoutBytes: number;
  stderrBytes: number;
  progressBytes: number;
  /** When stdout, stderr or the progress file last changed size (started_at until then). */
  lastChangeEpochSeconds: number;
  /** The wrapper's heartbeat interval (AWL_HEARTBEAT); absent from wrappers that predate it. */
  intervalSeconds?: number;
}

export const EXIT_REASONS = [
  "exited",
  "timed_out",
  "cancelled",
  "launch_failed",
  "dependency_failed",
] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

/** The last file the wrapper writes. */
export interface ExitRecord {
  /** The command's status (128+n after death by signal n); absent when a cancel came before it started. */
  exitCode?: number;
  /** Signal name without SIG (KILL, TERM…) when exitCode is 129–192; exit 130 and SIGINT read the same. */
  signal?: string;
  reason: ExitReason;
  finishedAtEpochSeconds: number;
  /** Processes of the command's group outlived it (killed on timeout/cancel, left alone otherwise). */
  descendantsAlive: boolean;
  stdoutDroppedBytes: number;
  stderrDroppedBytes: number;
  /** Every byte written to the stream, dropped ones included. */
  stdoutBytes?: number;
  stderrBytes?: number;
  /** reason=dependency_failed: the parent condition (JOB_ID:ok|any|failed) that could no longer hold. */
  dependency?: string;
  /** A write of the wrapper's found the disk or quota full while the job ran (`no_space=1`). */
  noSpace?: boolean;
  /** The wrapper that wrote the record (pid, /proc start time); absent from older wrappers. */
  wrapperPid?: number;
  procStart?: string;
  /** Processes of the job still running when the command ended, and what became of them (wrapper.sh "The whole job"). */
  leftovers?: number;
  leftoversAction?: "stopped" | "kept";
  tracking?: "cgroup" | "environment";
  /** What the job cost, as the wrapper measured it. */
  usage?: WrapperUsage;
  /** How long the command ran, in centiseconds of the monotonic clock (finished_at is whole seconds). */
  ranCentis?: number;
}

/** The exit record's resources= cpu_user_us= cpu_system_us= max_rss_bytes= oom_kills= (each null when empty). */
export interface WrapperUsage {
  source: "cgroup" | "rusage";
  cpuUserMicros: number | null;
  cpuSystemMicros: number | null;
  maxRssBytes: number | null;
  oomKills: number | null;
}

/** The `leftovers` file: `PID COMMAND` lines (the first 20 the wrapper found), blank lines and the rest ignored. */
export function parseLeftovers(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^[0-9]+ /.test(l))
    .slice(0, 20)
    .map((l) => l.slice(0, 220));
}

/** `key=value` lines → object. The value is everything after the first `=`; lines without `=` are ignored. */
export function parseKeyValue(text: string): Record<string, string> {
  const record: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) record[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return record;
}

function integer(value: string | undefined): number | undefined {
  return value !== undefined && /^[0-9]+$/.test(value) ? Number(value) : undefined;
}

/** A pid the job's own processes can have: 0 and 1 (kill(-1) signals every process) never are. */
function jobPid(value: string | undefined): number | undefined {
  const n = integer(value);
  return n !== undefined && n > 1 ? n : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

// Records are renamed into place whole; a missing final newline means the text was cut (e.g. a remote read).
function complete(text: string): Record<string, string> | null {
  return text.endsWith("\n") ? parseKeyValue(text) : null;
}

export function parseStarted(text: string): StartedRecord | null {
  const kv = complete(text);
  if (kv === null) return null;
  // Files in a job directory are untrusted: a record naming pid or pgid 0 or 1 is refused whole.
  const wrapperPid = jobPid(kv.wrapper_pid);
  const pid = jobPid(kv.pid);
  const startedAt = integer(kv.started_at);
  if (wrapperPid === undefined || pid === undefined || startedAt === undefined) return null;
  if (nonEmpty(kv.pgid) !== undefined && jobPid(kv.pgid) === undefined) return null;
  const record: StartedRecord = {
    protocol: integer(kv.protocol) ?? 1,
    wrapperPid,
    pid,
    startedAtEpochSeconds: startedAt,
  };
  const monitorPid = jobPid(kv.monitor_pid);
  if (monitorPid !== undefined) record.monitorPid = monitorPid;
  const pgid = integer(kv.pgid);
  if (pgid !== undefined) record.pgid = pgid;
  const bootId = nonEmpty(kv.boot_id);
  if (bootId !== undefined) record.bootId = bootId;
  const procStart = nonEmpty(kv.proc_start);
  if (procStart !== undefined) record.procStart = procStart;
  const pidStart = nonEmpty(kv.pid_start);
  if (pidStart !== undefined) record.pidStart = pidStart;
  if (kv.tracking === "cgroup" || kv.tracking === "environment") record.tracking = kv.tracking;
  const cgroup = nonEmpty(kv.cgroup);
  if (cgroup !== undefined) record.cgroup = cgroup;
  return record;
}

export function parseHeartbeat(text: string): HeartbeatRecord | null {
  const kv = complete(text);
  if (kv === null) return null;
  const now = integer(kv.now);
  const out = integer(kv.out);
  const err = integer(kv.err);
  const progress = integer(kv.progress);
  const lastChange = integer(kv.last_change);
  const interval = integer(kv.interval);
  if (
    now === undefined ||
    out === undefined ||
    err === undefined ||
    progress === undefined ||
    lastChange === undefined
  ) {
    return null;
  }
  return {
    nowEpochSeconds: now,
    stdoutBytes: out,
    stderrBytes: err,
    progressBytes: progress,
    lastChangeEpochSeconds: lastChange,
    ...(interval ? { intervalSeconds: interval } : {}),
  };
}

export function parseExitRecord(text: string): ExitRecord | null {
  const kv = complete(text);
  if (kv === null) return null;
  const reason = EXIT_REASONS.find((known) => known === kv.reason);
  const finishedAt = integer(kv.finished_at);
  if (reason === undefined || finishedAt === undefined) return null;
  const record: ExitRecord = {
    reason,
    finishedAtEpochSeconds: finishedAt,
    descendantsAlive: kv.descendants_alive === "1",
    stdoutDroppedBytes: integer(kv.stdout_dropped) ?? 0,
    stderrDroppedBytes: integer(kv.stderr_dropped) ?? 0,
  };
  const exitCode = integer(kv.exit_code);
  if (exitCode !== undefined) record.exitCode = exitCode;
  const signal = nonEmpty(kv.signal);
  if (signal !== undefined) record.signal = signal;
  const stdoutBytes = integer(kv.stdout_bytes);
  if (stdoutBytes !== undefined) record.stdoutBytes = stdoutBytes;
  const dependency = nonEmpty(kv.dependency);
  if (dependency !== undefined) record.dependency = dependency;
  const stderrBytes = integer(kv.stderr_bytes);
  if (stderrBytes !== undefined) record.stderrBytes = stderrBytes;
  if (kv.no_space === "1") record.noSpace = true;
  const wrapperPid = jobPid(kv.wrapper_pid);
  if (wrapperPid !== undefined) record.wrapperPid = wrapperPid;
  const procStart = nonEmpty(kv.proc_start);
  if (procStart !== undefined) record.procStart = procStart;
  const ranCentis = integer(kv.ran_cs);
  if (ranCentis !== undefined) record.ranCentis = ranCentis;
  const leftovers = integer(kv.leftovers);
  if (leftovers !== undefined) record.leftovers = leftovers;
  if (kv.leftovers_action === "stopped" || kv.leftovers_action === "kept")
    record.leftoversAction = kv.leftovers_action;
  if (kv.tracking === "cgroup" || kv.tracking === "environment") record.tracking = kv.tracking;
  if (kv.resources === "cgroup" || kv.resources === "rusage") {
    record.usage = {
      source: kv.resources,
      cpuUserMicros: integer(kv.cpu_user_us) ?? null,
      cpuSystemMicros: integer(kv.cpu_system_us) ?? null,
      maxRssBytes: integer(kv.max_rss_bytes) ?? null,
      oomKills: integer(kv.oom_kills) ?? null,
    };
  }
  return record;
}
