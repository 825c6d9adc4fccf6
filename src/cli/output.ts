// Writing results for people and for scripts (--json). Terminal results are replayed byte-identically.
import { type ArrayProgress, progressWords } from "../core/array-progress.ts";
import type { JobResult } from "../core/job.ts";
import {
  type CancelResponse,
  type GcResult,
  isDelivered,
  type JobStatus,
  type WaitResponse,
} from "../core/service-types.ts";
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

export function renderResult(r: JobResult, style: Style): string {
  const lines: string[] = [];
  let head = `${r.job_id} ${stateText(style, r.state)}`;
  head +=
    r.started_at === null ? " before its command started" : ` after ${humanDuration(r.duration_seconds)}`;
  if (r.exit_code !== null) head += ` (exit ${r.exit_code}${r.signal ? `, signal ${r.signal}` : ""})`;
  if (r.reason && r.state !== "failed") head += ` — ${r.reason}`;
  lines.push(head);
  if (r.name) lines.push(`name: ${r.name}`);
  if (r.attempt !== undefined) lines.push(`attempt ${r.attempt} of ${r.attempts}`);
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
    if (!text) continue;
    const shown = Buffer.byteLength(text) < total ? ` (tail of ${humanBytes(total)})` : "";
    lines.push(paint(style, "dim", `── ${label}${shown} ──`));
    lines.push(text.replace(/\n$/, ""));
  }
  if (r.digest.length > 0) {
    lines.push(paint(style, "dim", "── why it failed ──"));
    for (const d of r.digest) lines.push(`  ${d}`);
  }
  if (r.error) lines.push(`${paint(style, "bold", "next:")} ${r.error.suggestion}`);
  for (const a of r.artifacts) {
    if (!a.exists) {
      lines.push(
        `artifact ${a.declared_path}: ${paint(style, "yellow", "missing")}${a.reason ? ` (${a.reason})` : ""}`,
      );
      continue;
    }
    const parsed = a.content !== undefined ? ", parsed" : a.parse_error ? `, ${a.parse_error}` : "";
    lines.push(
      `artifact ${a.path}: ${humanBytes(a.size_bytes ?? 0)}, sha256 ${(a.sha256 ?? "").slice(0, 12)}…${parsed}`,
    );
  }
  return lines.join("\n");
}

export function renderWait(w: WaitResponse, style: Style): string {
  if (isDelivered(w)) return renderResult(w, style);
  const lines = [
    `${w.job_id} is still ${stateText(style, w.job_state)}${w.status_message ? ` (${w.status_message})` : ""}`,
  ];
  if (w.stdout_tail) lines.push(paint(style, "dim", "── stdout so far ──"), w.stdout_tail.replace(/\n$/, ""));
  if (w.stderr_tail) lines.push(paint(style, "dim", "── stderr so far ──"), w.stderr_tail.replace(/\n$/, ""));
  if (w.next_command) lines.push(`${paint(style, "bold", "next:")} ${w.next_command}`);
  return lines.join("\n");
}

export function renderStatus(s: JobStatus & { array_task?: string }, style: Style): string {
  const rows: [string, string][] = [
    ["job", s.job_id],
    ["state", stateText(style, s.state) + (s.status_message ? ` (${s.status_message})` : "")],
    ["command", displayArgv(s.argv, 200)],
    ["cwd", s.cwd],
    ["backend", s.host ? `${s.backend} on ${s.host}` : s.backend],
  ];
  if (s.name) rows.push(["name", s.name]);
  if (s.after) rows.push(["after", s.after.join(", ")]);
  if (s.array_task) rows.push(["array task", s.array_task]);
  if (s.attempt !== undefined) rows.push(["attempt", `${s.attempt} of ${s.attempts}`]);
  rows.push(["created", `${s.created_at} (${ago(s.created_at)})`]);
  if (s.elapsed_seconds === undefined) rows.push(["ran for", "never started"]);
  else
    rows.push([
      s.finished_at ? "ran for" : s.started_at ? "elapsed" : "waiting",
      humanDuration(s.elapsed_seconds),
    ]);
  if (s.exit_code !== null)
    rows.push(["exit code", String(s.exit_code) + (s.signal ? ` (signal ${s.signal})` : "")]);
  if (s.reason) rows.push(["reason", s.reason]);
  rows.push(["output", `${humanBytes(s.stdout_bytes)} stdout, ${humanBytes(s.stderr_bytes)} stderr`]);
  if (s.last_output_at) rows.push(["last output", ago(s.last_output_at)]);
  const left = leftoverLines(s.leftovers, s.job_id, style);
  if (left.length > 0) rows.push(["leftovers", left.join("\n")]);
  const cost = resourcesText(s.resources);
  if (cost) rows.push(["resources", cost]);
  if (s.host_unreachable)
    rows.push(["unreachable", paint(style, "yellow", `${s.host_unreachable} (state as last seen)`)]);
  const w = Math.max(...rows.map(([k]) => k.length));
  // a value of several lines (leftovers) is indented under its first
  const value = (v: string) => v.replaceAll("\n", `\n${" ".repeat(w + 2)}`);
  return rows.map(([k, v]) => `${paint(style, "dim", k.padEnd(w))}  ${value(v)}`).join("\n");
}

export function renderList(jobs: JobStatus[], style: Style, arrays: ArrayProgress[] = []): string {
  if (jobs.length === 0) return "no jobs match (submit one with `awaitless run -- <command>`)";
  const progress = arrays.map(
    (a) =>
      `${paint(style, "dim", "array")} ${a.job_id} ${a.array} ${stateText(style, a.state)}: ${progressWords(a)}`,
  );
  const rows = table(
    ["JOB", "STATE", "AGE", "DURATION", "EXIT", "HOST", "QUEUE", "NAME", "COMMAND"],
    jobs.map((j) => [
      j.job_id,
      stateText(style, j.state) + stateNote(j),
      ago(j.created_at).replace(" ago", ""),
      // A job that has not started has no duration yet (its AGE says how long it has waited).
      j.started_at === null ? "-" : humanDuration(j.elapsed_seconds),
      j.exit_code === null ? "-" : String(j.exit_code),
      j.backend === "local" ? "local" : j.backend === "slurm" ? `${j.host} (slurm)` : (j.host ?? "-"),
      j.queue ?? "-",
      j.name ?? "-",
      displayArgv(j.argv, 50),
    ]),
    style,
  );
  return [rows, ...progress].join("\n");
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
  const listed = ids.length ? `: ${ids.join(" ")}` : "";
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
    lines.push(`kept ${k.job_id}: ${k.reason} (gc again later, or --forget-unreachable to drop it anyway)`);
  for (const f of r.forgotten ?? [])
    lines.push(`forgot ${f.job_id}: its copy on ${f.host ?? "the host"} stays (${f.reason})`);
  return lines.join("\n");
}
