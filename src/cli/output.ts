// Writing results for people and for scripts (--json). Terminal results are replayed byte-identically.
import type { ArrayEntry } from "../core/model/array-views.ts";
import { type ArrayProgress, progressWords } from "../core/model/array-views.ts";
import type { JobResult } from "../core/model/job.ts";
import {
  type CancelResponse,
  type GcResult,
  isDelivered,
  type JobStatus,
  type WaitResponse,
} from "../core/model/service-api.ts";
import {
  ago,
  displayArgv,
  humanBytes,
  humanDuration,
  paint,
  type Style,
  stateText,
  table,
} from "./render.ts";
import { leftoverLines, resourcesText } from "./render-job-end.ts";
import { shown, shownLines } from "./terminal-safe.ts";

/** Compact JSON; a `result` taken from the store is spliced in as its stored bytes. */
export function toJson(value: object, rawResult?: string | null): string {
  if (rawResult && "result" in value) {
    const { result: _omit, ...rest } = value as Record<string, unknown>;
    const head = JSON.stringify(rest);
    return head === "{}" ? `{"result":${rawResult}}` : `${head.slice(0, -1)},"result":${rawResult}}`;
  }
  return JSON.stringify(value);
}

/**
 * A flat wait answer as JSON: a finished job's stored result bytes first (replayed byte-identically), then the
 * envelope fields beside them; a pending answer as it is.
 */
export function waitJson(w: WaitResponse, rawResult?: string | null): string {
  if (!rawResult || !isDelivered(w)) return JSON.stringify(w);
  const stored = JSON.parse(rawResult) as Record<string, unknown>;
  const envelope = Object.fromEntries(Object.entries(w).filter(([k]) => !Object.hasOwn(stored, k)));
  const tail = JSON.stringify(envelope);
  return tail === "{}" ? rawResult : `${rawResult.slice(0, -1)},${tail.slice(1)}`;
}

/**
 * `cancel --json`, flat like the other wait-like answers: the job's result fields (when it has ended) at the top
 * level, then cancel's own fields; `result` stays too, for scripts written against the nested form.
 */
export function cancelJson(r: CancelResponse): string {
  if (!r.result) return JSON.stringify(r);
  const envelope = Object.fromEntries(Object.entries(r).filter(([k]) => !Object.hasOwn(r.result!, k)));
  return JSON.stringify({ ...r.result, ...envelope });
}

/** An earlier attempt of a retried job, as a result line names it: how it ended and how long it ran. */
export interface EarlierAttempt {
  attempt: number;
  state: string;
  exit_code: number | null;
  started_at: string | null;
  finished_at: string | null;
}

/** What a result's first line says after its state: the reason, unless the state says it already. */
function endWords(r: JobResult): string {
  if (r.state === "failed" || r.reason === null) return "";
  // the error's sentence names what the reason code only labels (the parent of a dependency, the limit reached)
  const sentence = r.error?.reason;
  if (sentence && sentence !== r.reason && sentence !== r.state) return ` — ${shown(sentence)}`;
  return r.reason === r.state ? "" : ` — ${shown(r.reason)}`;
}

/** `attempt 3 of 3; earlier: 1 failed after 0.5s (exit 1), 2 …; 2.4s from the first start`. */
function attemptsLine(r: JobResult, earlier: EarlierAttempt[]): string {
  const head = `attempt ${r.attempt} of ${r.attempts}`;
  if (earlier.length === 0) return head;
  const ran = (a: { started_at: string | null; finished_at: string | null }) =>
    a.started_at === null || a.finished_at === null
      ? "before its command started"
      : `after ${humanDuration((Date.parse(a.finished_at) - Date.parse(a.started_at)) / 1000)}`;
  const each = earlier.map(
    (a) => `${a.attempt} ${a.state} ${ran(a)}${a.exit_code === null ? "" : ` (exit ${a.exit_code})`}`,
  );
  const first = earlier.find((a) => a.started_at !== null)?.started_at;
  const total =
    first && r.finished_at
      ? `; ${humanDuration((Date.parse(r.finished_at) - Date.parse(first)) / 1000)} from the first start to the end`
      : "";
  return `${head}; earlier: ${each.join(", ")}${total}`;
}

/** A parsed artifact's value is shown in at most this many lines of at most this many characters. */
const ARTIFACT_LINES = 20;
const ARTIFACT_WIDTH = 120;

/**
 * JSON as indented lines for people: objects and arrays of objects one member a line, a list of plain values on one
 * line (cut at the width); whatever fits the width stays on one line.
 */
function jsonLines(value: unknown, indent: string, width: number, lead = ""): string[] {
  // one character kept for the comma that may follow
  const room = width - indent.length - lead.length - 1;
  const compact = JSON.stringify(value) ?? "null";
  if (compact.length <= room || value === null || typeof value !== "object")
    return [indent + lead + cut(compact, room)];
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) {
      const count = ` (${value.length} items)`;
      return [`${indent}${lead}${cut(compact, room - count.length)}${count}`];
    }
    return [`${indent}${lead}[`, ...commas(value.map((v) => jsonLines(v, inner, width))), `${indent}]`];
  }
  const members = Object.entries(value).map(([k, v]) => jsonLines(v, inner, width, `${JSON.stringify(k)}: `));
  return [`${indent}${lead}{`, ...commas(members), `${indent}}`];
}

/** Members' lines joined as JSON writes them: a comma after each member but the last. */
function commas(members: string[][]): string[] {
  return members.flatMap((lines, i) =>
    i === members.length - 1 ? lines : [...lines.slice(0, -1), `${lines.at(-1)},`],
  );
}

const cut = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, Math.max(1, max - 1))}…` : text;

/** A parsed JSON artifact's value for people, bounded: at most ARTIFACT_LINES lines, with the way to all of it. */
function artifactValue(content: unknown, index: number, jobId: string, style: Style): string[] {
  const lines = jsonLines(content, "  ", ARTIFACT_WIDTH).map(shown);
  if (lines.length <= ARTIFACT_LINES) return lines;
  return [
    ...lines.slice(0, ARTIFACT_LINES),
    paint(
      style,
      "dim",
      `  … ${lines.length - ARTIFACT_LINES} more lines: awaitless wait ${jobId} --json | jq '.artifacts[${index}].content'`,
    ),
  ];
}

/** The artifacts of a result, one line each, with the parsed value of a JSON one (bounded). */
export function renderArtifacts(r: JobResult, style: Style): string[] {
  const lines: string[] = [];
  r.artifacts.forEach((a, i) => {
    if (!a.exists) {
      lines.push(
        `artifact ${shown(a.declared_path)}: ${paint(style, "yellow", "missing")}${a.reason ? ` (${shown(a.reason)})` : ""}`,
      );
      return;
    }
    const parsed = a.content !== undefined ? ", parsed:" : a.parse_error ? `, ${shown(a.parse_error)}` : "";
    lines.push(
      `artifact ${shown(a.path)}: ${humanBytes(a.size_bytes ?? 0)}, sha256 ${shown((a.sha256 ?? "").slice(0, 12))}…${parsed}`,
    );
    if (a.content !== undefined) lines.push(...artifactValue(a.content, i, r.job_id, style));
  });
  return lines;
}

export function renderResult(r: JobResult, style: Style, earlier: EarlierAttempt[] = []): string {
  const lines: string[] = [];
  let head = `${shown(r.job_id)} ${stateText(style, r.state)}`;
  head +=
    r.started_at === null ? " before its command started" : ` after ${humanDuration(r.duration_seconds)}`;
  if (r.exit_code !== null) head += ` (exit ${r.exit_code}${r.signal ? `, signal ${r.signal}` : ""})`;
  head += endWords(r);
  lines.push(head);
  if (r.name) lines.push(`name: ${shown(r.name)}`);
  if (r.attempt !== undefined) lines.push(attemptsLine(r, earlier));
  if (r.leftovers) lines.push(...leftoverLines(r.leftovers, r.job_id, style));
  else if (r.descendants_alive) {
    // a result stored before leftovers were tracked
    lines.push(
      paint(style, "yellow", "warning: processes the command started are still running (descendants_alive)"),
    );
  }
  const cost = resourcesText(r.resources);
  if (cost) lines.push(paint(style, "dim", `resources: ${cost}`));
  for (const [label, text, total] of [
    ["stdout", r.stdout_tail, r.stdout_bytes],
    ["stderr", r.stderr_tail, r.stderr_bytes],
  ] as const) {
    // a tail of blank lines shows nothing: no header over an empty section
    if (!text.trim()) continue;
    const shown = Buffer.byteLength(text) < total ? ` (tail of ${humanBytes(total)})` : "";
    lines.push(paint(style, "dim", `── ${label}${shown} ──`));
    lines.push(shownLines(text.replace(/\n$/, "")));
  }
  if (r.digest.length > 0) {
    lines.push(paint(style, "dim", "── why it failed ──"));
    for (const d of r.digest) lines.push(`  ${shown(d)}`);
  }
  if (r.error) lines.push(`${paint(style, "bold", "next:")} ${shown(r.error.suggestion)}`);
  lines.push(...renderArtifacts(r, style));
  return lines.join("\n");
}

export function renderWait(w: WaitResponse, style: Style, earlier: EarlierAttempt[] = []): string {
  if (isDelivered(w)) return renderResult(w, style, earlier);
  const lines = [
    `${shown(w.job_id)} is still ${stateText(style, w.job_state)}${w.status_message ? ` (${shown(w.status_message)})` : ""}`,
  ];
  if (w.stdout_tail?.trim())
    lines.push(paint(style, "dim", "── stdout so far ──"), shownLines(w.stdout_tail.replace(/\n$/, "")));
  if (w.stderr_tail?.trim())
    lines.push(paint(style, "dim", "── stderr so far ──"), shownLines(w.stderr_tail.replace(/\n$/, "")));
  if (w.next_command) lines.push(`${paint(style, "bold", "next:")} ${shown(w.next_command)}`);
  return lines.join("\n");
}

/**
 * A job's status for people; with its stored `result` once it ended (the reason's sentence, the artifacts) and a
 * retried job's `earlier` attempts.
 */
export function renderStatus(
  s: JobStatus & { array_task?: string },
  style: Style,
  more: { result?: JobResult | null; earlier?: EarlierAttempt[] } = {},
): string {
  const rows: [string, string][] = [
    ["job", shown(s.job_id)],
    ["state", stateText(style, s.state) + (s.status_message ? ` (${shown(s.status_message)})` : "")],
    ["command", displayArgv(s.argv, 200)],
    ["cwd", shown(s.cwd)],
    ["backend", s.host ? `${s.backend} on ${shown(s.host)}` : s.backend],
  ];
  if (s.name) rows.push(["name", shown(s.name)]);
  if (s.after) rows.push(["after", shown(s.after.join(", "))]);
  if (s.array_task) rows.push(["array task", shown(s.array_task)]);
  if (s.attempt !== undefined)
    rows.push([
      "attempt",
      more.result
        ? attemptsLine(more.result, more.earlier ?? []).replace(/^attempt /, "")
        : `${s.attempt} of ${s.attempts}`,
    ]);
  rows.push(["created", `${s.created_at} (${ago(s.created_at)})`]);
  if (s.elapsed_seconds === undefined) rows.push(["ran for", "never started"]);
  else
    rows.push([
      s.finished_at ? "ran for" : s.started_at ? "elapsed" : "waiting",
      humanDuration(s.elapsed_seconds),
    ]);
  if (s.exit_code !== null)
    rows.push(["exit code", String(s.exit_code) + (s.signal ? ` (signal ${s.signal})` : "")]);
  if (s.reason) {
    const sentence = more.result?.error?.reason;
    const said = sentence && sentence !== s.reason && sentence !== s.state ? `: ${sentence}` : "";
    rows.push(["reason", shown(`${s.reason}${said}`)]);
  }
  rows.push(["output", `${humanBytes(s.stdout_bytes)} stdout, ${humanBytes(s.stderr_bytes)} stderr`]);
  if (s.last_output_at) rows.push(["last output", ago(s.last_output_at)]);
  const left = leftoverLines(s.leftovers, s.job_id, style);
  if (left.length > 0) rows.push(["leftovers", left.join("\n")]);
  const cost = resourcesText(s.resources);
  if (cost) rows.push(["resources", cost]);
  if (s.host_unreachable)
    rows.push(["unreachable", paint(style, "yellow", `${shown(s.host_unreachable)} (state as last seen)`)]);
  const w = Math.max(...rows.map(([k]) => k.length));
  // a value of several lines (leftovers) is indented under its first
  const value = (v: string) => v.replaceAll("\n", `\n${" ".repeat(w + 2)}`);
  const lines = rows.map(([k, v]) => `${paint(style, "dim", k.padEnd(w))}  ${value(v)}`);
  if (more.result) lines.push(...renderArtifacts(more.result, style));
  return lines.join("\n");
}

/**
 * `list` for people. Each job array is one row (`arrays`: its state, how many tasks are done, its command); with
 * `--tasks` the tasks are rows instead (named by their address ARRAY_ID.INDEX), each array's progress under the table.
 */
export function renderList(
  jobs: (JobStatus & { array_task?: string })[],
  style: Style,
  progress: ArrayProgress[] = [],
  arrays: ArrayEntry[] = [],
): string {
  if (jobs.length === 0 && arrays.length === 0)
    return "no jobs match (submit one with `awaitless run -- <command>`)";
  const progressLines = progress.map(
    (a) =>
      `${paint(style, "dim", "array")} ${shown(a.job_id)} ${shown(a.array)} ${stateText(style, a.state)}: ${progressWords(a)}`,
  );
  const jobRows = jobs.map((j) => ({
    id: j.job_id,
    cells: [
      // an array task goes by its address; its queue is the array's own (internal), not worth a column
      shown(j.array_task ?? j.job_id),
      stateText(style, j.state) + stateNote(j),
      ago(j.created_at).replace(" ago", ""),
      // A job that has not started has no duration yet (its AGE says how long it has waited).
      j.started_at === null ? "-" : humanDuration(j.elapsed_seconds),
      j.exit_code === null ? "-" : String(j.exit_code),
      hostCell(j),
      shown(j.array_task ? "-" : (j.queue ?? "-")),
      shown(j.name ?? "-"),
      displayArgv(j.argv, 50),
    ],
  }));
  const arrayRows = arrays.map((a) => ({
    id: a.job_id,
    cells: [
      a.job_id,
      `${stateText(style, a.state)} (${a.done}/${a.tasks} done${a.failed_indices.length ? `, ${a.failed_indices.length} failed` : ""})`,
      ago(a.created_at).replace(" ago", ""),
      "-",
      "-",
      hostCell(a),
      "-",
      shown(a.name ?? "-"),
      `[array ${a.array}] ${displayArgv(a.argv, 50)}`,
    ],
  }));
  const rows = table(
    ["JOB", "STATE", "AGE", "DURATION", "EXIT", "HOST", "QUEUE", "NAME", "COMMAND"],
    [...jobRows, ...arrayRows].sort((x, y) => y.id.localeCompare(x.id)).map((r) => r.cells),
    style,
  );
  return [rows, ...progressLines].join("\n");
}

function hostCell(j: { backend: string; host: string | null }): string {
  return shown(
    j.backend === "local" ? "local" : j.backend === "slurm" ? `${j.host} (slurm)` : (j.host ?? "-"),
  );
}

/** What a list row adds to its state: the attempt of a retried job, the parent a held job waits for. */
function stateNote(j: JobStatus): string {
  if (j.attempt !== undefined && j.attempt > 1) return ` (attempt ${j.attempt}/${j.attempts})`;
  // a job held by --after: its status message names the parent still awaited ("waiting for job_… to succeed")
  const parent =
    j.after && j.state === "queued" ? /^waiting for (job_\S+)/.exec(j.status_message ?? "")?.[1] : undefined;
  return parent ? ` (after ${parent})` : "";
}

/** `gc` for people: what went (or would go), and the store against its quota. */
export function renderGc(r: GcResult): string {
  const dryRun = "dry_run" in r;
  const ids = dryRun ? r.would_remove : r.removed;
  const listed = ids.length ? `: ${shown(ids.join(" "))}` : "";
  const lines = [`${dryRun ? "would remove" : "removed"} ${ids.length} finished job(s)${listed}`];
  if (r.store_bytes !== undefined && r.quota_bytes !== undefined) {
    const size = `job files ${dryRun ? "would take" : "take"} ${humanBytes(r.store_bytes)} of the ${humanBytes(r.quota_bytes)} quota`;
    lines.push(
      r.over_quota
        ? `${size}: still over, because active jobs alone exceed it (raise store_quota_bytes or lower log_cap_bytes)`
        : size,
    );
  }
  if (dryRun) return lines.join("\n");
  for (const k of r.kept ?? [])
    lines.push(
      shown(`kept ${k.job_id}: ${k.reason} (gc again later, or --forget-unreachable to drop it anyway)`),
    );
  for (const f of r.forgotten ?? [])
    lines.push(shown(`forgot ${f.job_id}: its copy on ${f.host ?? "the host"} stays (${f.reason})`));
  for (const l of r.left ?? [])
    lines.push(shown(`forgot ${l.job_id} without touching its files: ${l.reason}`));
  return lines.join("\n");
}
