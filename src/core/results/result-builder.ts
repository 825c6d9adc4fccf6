// Builds the terminal result once, at the terminal transition: tails within one byte budget, digest,
// artifacts, redaction, and the snapshot hash over the canonical JSON.

import type { Backend, LogTail } from "../backend/backend.ts";
import type { ArtifactEntry, ErrorInfo, Job, JobResult, Leftovers, Resources } from "../model/job.ts";
import { type Decision, NO_SPACE_DETAIL } from "../rules/reconcile.ts";
import { REDACTION_MARGIN_BYTES, Redactor } from "../util/redact.ts";
import { cleanText, decodeUtf8, sanitizeControl, splitBudget, tailText, utf8Length } from "../util/text.ts";
import { parsedResults, redactJsonStrings } from "./artifacts.ts";
import { canonicalJson, sha256Hex } from "./canonical-json.ts";
import { failureDigest } from "./digest.ts";

type TerminalDecision = Extract<Decision, { kind: "terminal" }>;

export interface BuiltResult {
  result: JobResult;
  json: string;
  sha256: string;
  stdoutBytes: number;
  stderrBytes: number;
}

export interface Tails {
  stdout_tail: string;
  stderr_tail: string;
  stdout: LogTail;
  stderr: LogTail;
  truncated: boolean;
}

/** Reads both tails: the last `maxLines` lines of each (when given), then both cut to share `maxReturnBytes`. */
export async function readTails(
  backend: Backend,
  job: Job,
  maxReturnBytes: number,
  redactor: Redactor,
  maxLines?: number,
): Promise<Tails> {
  // Read past the budget so redaction and cleaning see whole secrets and lines before the final cut.
  const readBytes = maxReturnBytes + REDACTION_MARGIN_BYTES;
  const [out, err] = await Promise.all([
    backend.readTail(job, "stdout", readBytes),
    backend.readTail(job, "stderr", readBytes),
  ]);
  // Secrets are matched before cleaning (as given) and after it (as cleaned).
  const clean = (t: LogTail) => {
    const edges = { startsMidStream: t.bytes.length < t.totalBytes };
    return redactor.redact(cleanText(redactor.redact(decodeUtf8(t.bytes), edges)), edges);
  };
  const lines = (text: string) => (maxLines === undefined ? text : lastLines(text, maxLines));
  const outClean = clean(out);
  const errClean = clean(err);
  const outText = lines(outClean);
  const errText = lines(errClean);
  const budget = splitBudget(utf8Length(outText), utf8Length(errText), maxReturnBytes);
  const o = tailText(outText, budget.stdoutBytes);
  const e = tailText(errText, budget.stderrBytes);
  const truncated =
    o.truncated ||
    e.truncated ||
    outText.length < outClean.length ||
    errText.length < errClean.length ||
    out.bytes.length < out.totalBytes ||
    err.bytes.length < err.totalBytes;
  return { stdout_tail: o.text, stderr_tail: e.text, stdout: out, stderr: err, truncated };
}

export async function buildResult(
  backend: Backend,
  job: Job,
  d: TerminalDecision,
  maxReturnBytes: number,
  maxLines?: number,
): Promise<BuiltResult> {
  const redactor = new Redactor(Object.values(await backend.secretValues(job)));
  const tails = await readTails(backend, job, maxReturnBytes, redactor, maxLines);
  let artifacts: ArtifactEntry[] = [];
  if (job.spec.artifacts.length > 0) {
    try {
      artifacts = await backend.collectArtifacts(job, maxReturnBytes);
    } catch (e) {
      artifacts = job.spec.artifacts.map((p) => ({
        path: p,
        declared_path: p,
        exists: false,
        remote: !backend.capabilities.runsHere,
        reason: `could not be read: ${(e as Error).message}`,
      }));
    }
    artifacts = artifacts.map((a) => redactArtifact(a, redactor));
  }
  const digest =
    d.to === "succeeded"
      ? []
      : d.no_space
        ? [NO_SPACE_DETAIL, ...failureDigest(tails.stdout_tail, tails.stderr_tail, 7)]
        : failureDigest(tails.stdout_tail, tails.stderr_tail);
  const startedMs = d.started_at ? Date.parse(d.started_at) : null;
  const duration = startedMs === null ? null : Math.max(0, (Date.parse(d.finished_at) - startedMs) / 1000);
  const body: Omit<JobResult, "snapshot"> = {
    job_id: job.job_id,
    name: job.name,
    backend: job.backend,
    host: job.host,
    state: d.to,
    exit_code: d.exit_code,
    signal: d.signal,
    reason: d.reason,
    created_at: job.created_at,
    started_at: d.started_at,
    finished_at: d.finished_at,
    duration_seconds: duration === null ? null : Math.round(duration * 1000) / 1000,
    stdout_tail: tails.stdout_tail,
    stderr_tail: tails.stderr_tail,
    stdout_bytes: tails.stdout.totalBytes,
    stderr_bytes: tails.stderr.totalBytes,
    stdout_dropped_bytes: tails.stdout.droppedBytes,
    stderr_dropped_bytes: tails.stderr.droppedBytes,
    truncated: tails.truncated,
    descendants_alive: d.descendants_alive,
    leftovers: leftoversOf(d, redactor),
    resources: d.resources ?? UNKNOWN_RESOURCES,
    digest,
    artifacts,
    parsed_results: parsedResults(artifacts),
    error: d.error,
    ...attemptFields(job),
  };
  return seal(body);
}

/** What a job whose command never ran left: nothing. */
const NOTHING_LEFT: Leftovers = { count: 0, action: "stopped", processes: [], tracking: null };

/** Nothing measured what the job cost. */
export const UNKNOWN_RESOURCES: Resources = {
  cpu_user_seconds: null,
  cpu_system_seconds: null,
  max_rss_bytes: null,
  oom_kills: null,
  source: null,
};

/** The decision's leftovers with each process line made safe to show (controls removed) and redacted; unknown without. */
function leftoversOf(d: TerminalDecision, redactor: Redactor): Leftovers {
  const l = d.leftovers;
  if (!l) return { count: null, action: null, processes: [], tracking: null };
  return { ...l, processes: l.processes.map((p) => redactor.redact(sanitizeControl(p, 200))) };
}

/** Hashes the canonical JSON of the body and adds the snapshot: the bytes every later reader replays. */
export function seal(body: Omit<JobResult, "snapshot">): BuiltResult {
  const sha256 = sha256Hex(canonicalJson(body));
  const result: JobResult = { ...body, snapshot: { sha256, captured_at: new Date().toISOString() } };
  return {
    result,
    json: canonicalJson(result),
    sha256,
    stdoutBytes: body.stdout_bytes,
    stderrBytes: body.stderr_bytes,
  };
}

/** The result of a job whose launch failed before any wrapper ran (nothing ran, nothing to read). */
export function launchFailedResult(job: Job, message: string, suggestion: string): BuiltResult {
  return seal({
    job_id: job.job_id,
    name: job.name,
    backend: job.backend,
    host: job.host,
    state: "failed",
    exit_code: null,
    signal: null,
    reason: "launch_failed",
    created_at: job.created_at,
    started_at: null,
    finished_at: new Date().toISOString(),
    duration_seconds: null,
    stdout_tail: "",
    stderr_tail: "",
    stdout_bytes: 0,
    stderr_bytes: 0,
    stdout_dropped_bytes: 0,
    stderr_dropped_bytes: 0,
    truncated: false,
    descendants_alive: false,
    leftovers: NOTHING_LEFT,
    resources: UNKNOWN_RESOURCES,
    digest: [message],
    artifacts: [],
    parsed_results: {},
    error: { stage: "launch_failed", reason: "launch_failed", retryable: true, suggestion, detail: message },
    ...attemptFields(job),
  });
}

/** A job with retries: which attempt a result is of, and how many the job may have. */
function attemptFields(job: Job): { attempt?: number; attempts?: number } {
  const p = job.spec.retry;
  return p ? { attempt: job.attempt ?? 1, attempts: p.retries + 1 } : {};
}

/** A retried job cancelled while its next attempt waited to launch: that attempt never ran. */
export function cancelledBeforeLaunchResult(job: Job): BuiltResult {
  const base = launchFailedResult(job, "cancelled before this attempt was launched", "").result;
  const { snapshot: _s, ...body } = base;
  return seal({
    ...body,
    state: "cancelled",
    reason: "cancelled",
    digest: [],
    error: {
      stage: "cancelled",
      reason: "cancelled",
      retryable: false,
      suggestion: "resubmit the command if it still needs to run",
      detail: `cancelled before attempt ${job.attempt ?? 1} was launched`,
    },
  });
}

/** A job whose dependency was already impossible at submit (never launched): cancelled, reason dependency_failed. */
export function dependencyFailedResult(job: Job, error: ErrorInfo): BuiltResult {
  return seal({
    ...launchFailedResult(job, error.reason, error.suggestion).result,
    state: "cancelled",
    reason: "dependency_failed",
    digest: [error.reason],
    error,
  });
}

/** The last `n` lines of `text` (a final newline does not count as an extra empty line). */
function lastLines(text: string, n: number): string {
  if (n <= 0 || text === "") return "";
  const end = text.endsWith("\n") ? text.length - 1 : text.length;
  let pos = end;
  for (let count = 0; count < n; count++) {
    if (pos <= 0) return text;
    const newline = text.lastIndexOf("\n", pos - 1);
    if (newline < 0) return text;
    pos = newline;
  }
  return text.slice(pos + 1);
}

function redactArtifact(a: ArtifactEntry, r: Redactor): ArtifactEntry {
  return a.content === undefined ? a : { ...a, content: redactJsonStrings(a.content, r) };
}
