// Owns the Slurm commands we run and the reading of their output: squeue/sacct/scontrol/sbatch argv and parsers.
import { AwaitlessError } from "../../core/model/errors.ts";
import { SLURM_COMMENT_PREFIX } from "./sbatch-script.ts";

// ---------------------------------------------------------------- the queries we run
// Fixed-grammar fields first, free text (job name, comment) last: sacct/squeue never escape '|'.
export const SQUEUE_FORMAT = "%i|%T|%r|%j|%k";
export const SACCT_FIELDS = "JobID,State,ExitCode,Reason,Submit,Start,End,JobName,Comment";

/**
 * One squeue call for many jobs. A lone ID is repeated: `--jobs=X` fails (rc 1) once X is purged, `--jobs=X,X` does
 * not. `--array`: one line per array task (pending tasks are otherwise collapsed into `123_[0,4]`, even with --jobs).
 */
export function squeueArgs(slurmJobIds: readonly string[]): string[] {
  const ids = slurmJobIds.length === 1 ? [slurmJobIds[0], slurmJobIds[0]] : slurmJobIds;
  return ["squeue", "--noheader", "--array", `--jobs=${ids.join(",")}`, `--format=${SQUEUE_FORMAT}`];
}
/**
 * Jobs carrying our Slurm job name, in every state the controller still holds (find-by-tag: squeue knows a job the
 * moment sbatch accepts it). `--states=all`: a job or array task that ended a moment ago has left squeue's default
 * states but may not be in the accounting yet (slurmdbd lags), and found in neither it would be submitted again and
 * run twice; the controller keeps ended jobs for MinJobAge (300 s by default).
 */
export function squeueByNameArgs(slurmJobName: string): string[] {
  return [
    "squeue",
    "--noheader",
    "--array",
    "--states=all",
    `--name=${slurmJobName}`,
    `--format=${SQUEUE_FORMAT}`,
  ];
}
/** The cluster's configuration (MaxArraySize: the highest array task ID plus one). */
export const SCONTROL_CONFIG_ARGS = ["scontrol", "show", "config"] as const;

/** MaxArraySize from `scontrol show config`; undefined when the output does not say. */
export function parseMaxArraySize(stdout: string): number | undefined {
  const m = /^\s*MaxArraySize\s*=\s*(\d+)\s*$/m.exec(stdout);
  return m ? Number(m[1]) : undefined;
}

/** An array task's ID `123_4` as its array job (`123`) and task ID (4); undefined for any other ID. */
export function arrayTaskOf(slurmJobId: string): { arrayJobId: string; taskId: number } | undefined {
  const m = /^(\d+)_(\d+)$/.exec(slurmJobId);
  return m ? { arrayJobId: m[1]!, taskId: Number(m[2]) } : undefined;
}

/**
 * The task IDs of a collapsed array line (`123_[1-3,7%2]`: pending tasks, or pending ones cancelled together) as full
 * IDs (`123_1` …); undefined for any other ID. A range longer than `max` is cut there (a guard, not expected).
 */
export function expandCollapsedArrayId(slurmJobId: string, max = 100_000): string[] | undefined {
  const m = /^(\d+)_\[([0-9,\-:]+)(?:%\d+)?\]$/.exec(slurmJobId);
  if (!m) return undefined;
  const out: string[] = [];
  for (const part of m[2]!.split(",")) {
    const r = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part);
    if (!r) return undefined;
    const lo = Number(r[1]);
    const hi = r[2] === undefined ? lo : Number(r[2]);
    const step = r[3] === undefined ? 1 : Math.max(1, Number(r[3]));
    for (let i = lo; i <= hi && out.length < max; i += step) out.push(`${m[1]}_${i}`);
  }
  return out;
}

/** Sorted task IDs in Slurm's --array syntax: runs of consecutive IDs as ranges (`0-99,105`). */
export function arrayIndexText(ids: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < ids.length) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(j === i ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
/** One sacct call for many jobs, allocation lines only, from an explicit start day (YYYY-MM-DD, a day early: sacct reads local time). */
export function sacctArgs(slurmJobIds: readonly string[], since: Date): string[] {
  return [
    "sacct",
    "--noheader",
    "--parsable2",
    "--allocations",
    `--format=${SACCT_FIELDS}`,
    `--starttime=${sacctDay(since)}`,
    `--jobs=${slurmJobIds.join(",")}`,
  ];
}
/**
 * Find-by-tag, second step (after squeueByNameArgs): the calling user's jobs since a day before `since`. Filter the
 * rows with findTaggedJobs: sacct's JobName is often the placeholder `allocation` and Comment stays empty until the
 * job ends, so `sacct --name` alone can miss our job.
 */
export function sacctMineArgs(since: Date): string[] {
  return [
    "sacct",
    "--noheader",
    "--parsable2",
    "--allocations",
    `--format=${SACCT_FIELDS}`,
    `--starttime=${sacctDay(since)}`,
  ];
}
/** Exact exit codes (sacct loses 128 on codes ≥ 128) while the controller remembers the job (MinJobAge). */
export function scontrolShowJobArgs(slurmJobId: string): string[] {
  return ["scontrol", "--oneliner", "show", "job", slurmJobId];
}
function sacctDay(since: Date): string {
  return new Date(since.getTime() - 86_400_000).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------- parsing
export interface SlurmRow {
  /** The job's own ID: `123`, `123_4` (array task), `123+1` (het component). */
  slurmJobId: string;
  /** `batch`, `extern`, `0` … for step lines; absent on the job (allocation) line. */
  step?: string;
  /** Slurm's state word, without decorations (`CANCELLED by 0` → `CANCELLED`). */
  slurmState: string;
  /** uid from `CANCELLED by <uid>`. */
  cancelledByUid?: string;
  reason?: string;
  /** Raw `N:S` (sacct only). */
  exitCode?: string;
  submit?: string;
  start?: string;
  end?: string;
  name: string;
  comment?: string;
}

function splitFixed(line: string, fixed: number): string[] | undefined {
  const parts = line.split("|");
  if (parts.length < fixed + 2) return undefined;
  const head = parts.slice(0, fixed);
  const rest = parts.slice(fixed);
  // the comment is the last field; a job name containing '|' keeps its pipes
  const comment = rest.pop() ?? "";
  return [...head, rest.join("|"), comment];
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value === "" || value === "Unknown" || value === "None" || value === "(null)"
    ? undefined
    : value;
}

function parseIdAndState(
  id: string,
  state: string,
): Pick<SlurmRow, "slurmJobId" | "step" | "slurmState" | "cancelledByUid"> {
  const dot = id.indexOf(".");
  const m = /^([A-Z_]+)\+?(?: by (\d+))?$/.exec(state.trim());
  return {
    slurmJobId: dot < 0 ? id : id.slice(0, dot),
    ...(dot < 0 ? {} : { step: id.slice(dot + 1) }),
    slurmState: m?.[1] ?? state.trim(),
    ...(m?.[2] === undefined ? {} : { cancelledByUid: m[2] }),
  };
}

function rowsOf(
  stdout: string,
  what: string,
  fields: number,
  toRow: (parts: string[]) => SlurmRow,
): SlurmRow[] {
  const rows: SlurmRow[] = [];
  for (const line of stdout.split("\n")) {
    if (line.trim() === "") continue;
    const parts = splitFixed(line.replace(/\r$/, ""), fields);
    if (parts === undefined || !/^\d+([_+][0-9[\]\-,%]+)?(\.[A-Za-z0-9_+-]+)?$/.test(parts[0] ?? "")) {
      throw new AwaitlessError(
        "internal",
        `Could not parse a line of ${what} output: ${JSON.stringify(line.slice(0, 200))}.`,
        "The cluster's Slurm prints a format Awaitless does not know; report this with your Slurm version.",
        { scheduler_message: line.slice(0, 200) },
      );
    }
    rows.push(toRow(parts));
  }
  return rows;
}

/** Rows of `squeue --noheader --format=SQUEUE_FORMAT`. */
export function parseSqueue(stdout: string): SlurmRow[] {
  return rowsOf(stdout, "squeue", 3, ([id = "", state = "", reason, name = "", comment]) => {
    const row: SlurmRow = { ...parseIdAndState(id, state), name };
    const r = present(reason);
    const c = present(comment);
    return { ...row, ...(r === undefined ? {} : { reason: r }), ...(c === undefined ? {} : { comment: c }) };
  });
}

/** Rows of `sacct --noheader --parsable2 --format=SACCT_FIELDS` (step lines included when asked for). */
export function parseSacct(stdout: string): SlurmRow[] {
  return rowsOf(
    stdout,
    "sacct",
    7,
    ([id = "", state = "", exitCode, reason, submit, start, end, name = "", comment]) => {
      const row: SlurmRow = { ...parseIdAndState(id, state), name };
      const optional: Record<string, string | undefined> = {
        reason: present(reason),
        exitCode: present(exitCode),
        submit: present(submit),
        start: present(start),
        end: present(end),
        comment: present(comment),
      };
      for (const [k, v] of Object.entries(optional))
        if (v !== undefined) (row as unknown as Record<string, string>)[k] = v;
      return row;
    },
  );
}

/** True when squeue failed only because the single job it was asked about is unknown (purged after MinJobAge). */
export function isSqueueUnknownJobError(stderr: string): boolean {
  return /Invalid job id specified/i.test(stderr);
}

/** The reply of `sbatch --parsable`: `123` or `123;cluster`. */
export function parseSbatchReply(stdout: string): { slurmJobId: string; cluster?: string } {
  const lines = stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const m = lines.length === 1 ? /^(\d+)(?:;([A-Za-z0-9._-]+))?$/.exec(lines[0] ?? "") : null;
  if (m === null) {
    throw new AwaitlessError(
      "launch_failed",
      `sbatch replied ${JSON.stringify(stdout.slice(0, 200))}, which holds no Slurm job ID.`,
      "The job may have been submitted anyway; Awaitless looks it up by its tag before any retry, so do not resubmit by hand.",
      { scheduler_command: "sbatch", scheduler_message: stdout.slice(0, 200) },
    );
  }
  return { slurmJobId: m[1] ?? "", ...(m[2] === undefined ? {} : { cluster: m[2] }) };
}

/** JobState, Reason and the exact ExitCode from `scontrol --oneliner show job ID`. */
export function parseScontrolJob(
  stdout: string,
): { slurmJobId: string; slurmState: string; reason?: string; exitCode?: string } | undefined {
  const fields = new Map<string, string>();
  const re = /(?:^|\s)([A-Za-z][A-Za-z0-9_/:]*)=(\S*)/g;
  for (const m of stdout.matchAll(re)) if (!fields.has(m[1] ?? "")) fields.set(m[1] ?? "", m[2] ?? "");
  const id = fields.get("JobId");
  const state = fields.get("JobState");
  if (id === undefined || state === undefined) return undefined;
  const reason = present(fields.get("Reason"));
  const exitCode = present(fields.get("ExitCode"));
  return {
    slurmJobId: id,
    slurmState: state,
    ...(reason === undefined ? {} : { reason }),
    ...(exitCode === undefined ? {} : { exitCode }),
  };
}

/** Distinct Slurm job IDs among rows tagged with our job (name `…-<job_id>` or comment `awaitless:<job_id>`). */
export function findTaggedJobs(rows: readonly SlurmRow[], jobId: string): string[] {
  const ids = rows
    .filter((r) => r.name.endsWith(`-${jobId}`) || r.comment === `${SLURM_COMMENT_PREFIX}${jobId}`)
    .flatMap((r) => expandCollapsedArrayId(r.slurmJobId) ?? [r.slurmJobId]);
  const task = (id: string) => arrayTaskOf(id)?.taskId ?? -1;
  return [...new Set(ids)].sort(
    (a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10) || task(a) - task(b),
  );
}
