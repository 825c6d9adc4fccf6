// The text of a wait-like answer: the whole result in words, for the clients whose model reads only the text.
import { formatSeconds } from "./results.ts";

type Answer = Record<string, unknown>;

/**
 * Fields no next step needs, left to structuredContent: when it was created, started, finished and captured (its
 * duration is in the text), the answer's own bookkeeping, and what other lines of the text already say.
 */
const NOT_WORDED = new Set([
  "created_at",
  "started_at",
  "finished_at",
  "snapshot",
  "waited_seconds",
  "wait_state",
  "delivery_state",
  "job_state",
  "delivery",
  "detach_reason",
  "command_form",
  "next_command",
  "next_attempt_at",
  "finished_jobs",
  "backend",
  "stdout_bytes",
  "stderr_bytes",
  "stdout_dropped_bytes",
  "stderr_dropped_bytes",
]);

/** Fields the text words itself, below. */
const WORDED = new Set([
  "job_id",
  "name",
  "host",
  "state",
  "exit_code",
  "signal",
  "reason",
  "duration_seconds",
  "attempt",
  "attempts",
  "idempotent_replay",
  "launch_resumed",
  "descendants_alive",
  "status_message",
  "host_unreachable",
  "error",
  "digest",
  "stdout_tail",
  "stderr_tail",
  "truncated",
  "parsed_results",
  "artifacts",
  "leftovers",
  "resources",
  "next_action",
]);

const isSet = (value: unknown): boolean =>
  value !== undefined &&
  value !== null &&
  value !== "" &&
  !(Array.isArray(value) && value.length === 0) &&
  !(typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0);

const str = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** The first line of a finished job's answer: who, how it ended, in how long, where. */
function endedLine(a: Answer): string {
  // why it ended: the signal, and the reason unless it only repeats the state
  const why = [a.signal, a.reason !== a.state ? a.reason : null].filter(isSet).map(str);
  const because = why.length > 0 ? ` (${why.join(", ")})` : "";
  const errorReason = (a.error as { reason?: unknown } | null | undefined)?.reason;
  const code = typeof a.exit_code === "number" ? a.exit_code : null;
  const how =
    a.state === "succeeded"
      ? `succeeded (exit code ${code ?? 0})`
      : a.state === "failed"
        ? `failed${code !== null ? ` with exit code ${code}` : ""}${because}`
        : a.state === "timed_out"
          ? `was killed by its timeout_seconds limit${isSet(errorReason) ? ` (${str(errorReason)})` : ""}`
          : `ended ${str(a.state)}${because}`;
  const took = typeof a.duration_seconds === "number" ? ` after ${formatSeconds(a.duration_seconds)}` : "";
  // a job that did not just succeed or fail: its exit code (and signal) after how it ended
  const exit =
    a.state === "succeeded" || a.state === "failed"
      ? ""
      : `${code !== null ? `; exit code ${code}` : ""}${a.state === "timed_out" ? because : ""}`;
  let line = `Job ${str(a.job_id)}${named(a)} ${how}${took}${exit}${where(a)}.`;
  if (a.state === "timed_out")
    line += " Its process group got SIGTERM, then SIGKILL if still alive after the grace period.";
  return line;
}

const named = (a: Answer): string => (isSet(a.name) ? ` (${str(a.name)})` : "");
const where = (a: Answer): string =>
  isSet(a.host) ? ` on ${str(a.host)}${isSet(a.backend) ? ` (${str(a.backend)})` : ""}` : "";

/** Notes on how the answer came about (retries, replays, processes left behind). */
function notes(a: Answer): string[] {
  const out: string[] = [];
  if (typeof a.attempt === "number" && typeof a.attempts === "number")
    out.push(`This is attempt ${a.attempt} of ${a.attempts}.`);
  if (a.launch_resumed === true)
    out.push("Its request ID created it, but its first client stopped before launching it; launched now.");
  else if (a.idempotent_replay === true) out.push("Idempotent replay: this request ID already created it.");
  if (a.descendants_alive === true)
    out.push("Processes the command started were still running when it ended.");
  return out;
}

function errorLines(error: unknown): string[] {
  if (!isSet(error)) return [];
  if (typeof error !== "object") return [`Error: ${str(error)}`];
  const { stage, reason, retryable, suggestion, ...rest } = error as Record<string, unknown>;
  const head = [stage, reason].filter(isSet).map(str).join(": ");
  const lines = [`Error${head ? `: ${head}` : ""}${retryable === true ? " (retryable)" : ""}.`];
  if (isSet(suggestion)) lines.push(`Suggestion: ${str(suggestion)}.`);
  for (const [key, value] of Object.entries(rest)) if (isSet(value)) lines.push(`${key}: ${str(value)}`);
  return lines;
}

/** One stream's tail with what it is: the last lines of how many bytes. */
function tailLines(a: Answer, stream: "stdout" | "stderr", soFar: boolean): string[] {
  const tail = a[`${stream}_tail`];
  if (typeof tail !== "string" || tail === "") return [];
  const total = a[`${stream}_bytes`];
  const shown = Buffer.byteLength(tail);
  const size =
    typeof total === "number"
      ? shown < total
        ? `, last ${shown} of ${total} bytes`
        : `, ${total} bytes`
      : "";
  return [
    `${stream}${soFar ? " so far" : ""}${size ? ` (${size.slice(2)})` : ""}:\n${tail.replace(/\n$/, "")}`,
  ];
}

function artifactLines(artifacts: unknown): string[] {
  if (!Array.isArray(artifacts) || artifacts.length === 0) return [];
  const lines = artifacts.map((entry) => {
    if (typeof entry !== "object" || entry === null) return `- ${str(entry)}`;
    const e = entry as Record<string, unknown>;
    const what = !e.exists
      ? `not found${isSet(e.reason) ? ` (${str(e.reason)})` : ""}`
      : [
          typeof e.size_bytes === "number" ? `${e.size_bytes} bytes` : "",
          isSet(e.sha256) ? `sha256 ${str(e.sha256)}` : "",
          isSet(e.parse_error) ? `not read as JSON: ${str(e.parse_error)}` : "",
        ]
          .filter(Boolean)
          .join(", ");
    const declared = isSet(e.declared_path) && e.declared_path !== e.path ? ` (${str(e.declared_path)})` : "";
    return `- ${str(e.path)}${declared}${e.remote === true ? " on the job's host" : ""}: ${what || "exists"}`;
  });
  return [`Artifacts:\n${lines.join("\n")}`];
}

/** What the job's processes left when its command ended: how many, what became of them, which (none: no line). */
function leftoverLines(leftovers: unknown): string[] {
  if (!isSet(leftovers) || typeof leftovers !== "object") return [];
  const { count, action, processes, tracking, ...rest } = leftovers as Record<string, unknown>;
  if (count === 0 || !isSet(count)) return [];
  const what =
    action === "kept"
      ? " and were kept running (cancel_job stops them)"
      : action === "stopped"
        ? " and were stopped"
        : isSet(action)
          ? ` (${str(action)})`
          : "";
  const how = [isSet(tracking) ? `tracking: ${str(tracking)}` : "", ...restParts(rest)].filter(Boolean);
  const list = Array.isArray(processes) && processes.length > 0 ? `:\n${processes.map(str).join("\n")}` : "";
  return [
    `Leftovers: ${str(count)} process(es) outlived the command${what}${how.length > 0 ? ` (${how.join("; ")})` : ""}${list}`,
  ];
}

/** Below these a job's CPU time and peak memory say nothing a next step uses (a shell's own start costs that much). */
export const NOTABLE_CPU_SECONDS = 1;
export const NOTABLE_MAX_RSS_BYTES = 100 * 1024 * 1024;

/**
 * CPU time and peak memory, when they say something: an OOM kill, at least NOTABLE_CPU_SECONDS of CPU or
 * NOTABLE_MAX_RSS_BYTES of memory, or a figure this text has no words for yet. A quick command's tiny figures stay
 * in structuredContent only.
 */
function resourceLines(resources: unknown): string[] {
  if (!isSet(resources) || typeof resources !== "object") return [];
  const { cpu_user_seconds, cpu_system_seconds, max_rss_bytes, oom_kills, source, ...rest } =
    resources as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" ? v : 0);
  const other = restParts(rest);
  const notable =
    num(oom_kills) > 0 ||
    num(cpu_user_seconds) + num(cpu_system_seconds) >= NOTABLE_CPU_SECONDS ||
    num(max_rss_bytes) >= NOTABLE_MAX_RSS_BYTES ||
    other.length > 0;
  if (!notable) return [];
  const parts: string[] = [];
  if (typeof cpu_user_seconds === "number" || typeof cpu_system_seconds === "number")
    parts.push(`cpu ${secs(cpu_user_seconds)} user + ${secs(cpu_system_seconds)} system`);
  if (typeof max_rss_bytes === "number") parts.push(`peak memory ${mebibytes(max_rss_bytes)}`);
  if (num(oom_kills) > 0) parts.push(`${str(oom_kills)} process(es) killed for memory (OOM)`);
  parts.push(...other);
  return [`Resources: ${parts.join(", ")}${isSet(source) ? ` (${str(source)})` : ""}.`];
}

/** Fields of a nested object this text has no words for yet, as `key: value` (left out when they say nothing). */
const restParts = (rest: Record<string, unknown>): string[] =>
  Object.entries(rest)
    .filter(([, v]) => isSet(v) && v !== false && v !== 0)
    .map(([k, v]) => `${k}: ${str(v)}`);

const secs = (v: unknown) => (typeof v === "number" ? `${Number(v.toFixed(2))}s` : "?");
const mebibytes = (bytes: number) => `${Number((bytes / 1048576).toFixed(1))} MiB`;

/** Any field this text has no words for yet, as `key: value` (so a field added to results still reaches the text). */
function otherLines(a: Answer): string[] {
  return Object.entries(a)
    .filter(([key, value]) => !WORDED.has(key) && !NOT_WORDED.has(key) && isSet(value))
    .map(([key, value]) => `${key}: ${str(value)}`);
}

/** The body every answer shares: error, digest, tails, parsed results, artifacts, leftovers, resources, the rest. */
function bodyLines(a: Answer, soFar: boolean): string[] {
  const lines = [...notes(a), ...errorLines(a.error)];
  if (Array.isArray(a.digest) && a.digest.length > 0) lines.push(`Digest:\n${a.digest.map(str).join("\n")}`);
  lines.push(...tailLines(a, "stdout", soFar), ...tailLines(a, "stderr", soFar));
  if (a.truncated === true)
    lines.push("Tails are cut; get_job_logs reads the whole log (grep searches all of it, from_line pages).");
  if (isSet(a.parsed_results)) lines.push(`parsed_results: ${JSON.stringify(a.parsed_results)}`);
  lines.push(...artifactLines(a.artifacts), ...leftoverLines(a.leftovers), ...resourceLines(a.resources));
  lines.push(...otherLines(a));
  return lines;
}

/** The text of a finished job's answer (a delivered wait, an inline run, a completion's result, a Task's result). */
export function finishedText(answer: object): string {
  const a = answer as Answer;
  return [endedLine(a), ...bodyLines(a, false)].join("\n");
}

/** The text of an answer whose job is still going: `head` says why the call ended, then what is known so far. */
export function pendingText(answer: object, head: string): string {
  const a = answer as Answer;
  const lines = [head, ...bodyLines(a, true)];
  if (isSet(a.next_action)) lines.push(str(a.next_action));
  return lines.join("\n");
}

/** The first line of a pending wait: the job's state, what it is doing, and that only the wait ended. */
export function pendingHead(answer: object): string {
  const a = answer as Answer;
  const status = isSet(a.status_message) ? ` (${str(a.status_message)})` : "";
  const why = isSet(a.host_unreachable)
    ? `the wait ended because its host cannot be reached (${str(a.host_unreachable)})`
    : "the wait ended (timeout_seconds or the hold budget passed) before the job finished; " +
      "the job keeps going and was not killed or changed";
  return `Job ${str(a.job_id)}${named(a)} is ${str(a.job_state ?? a.state)}${status}${where(a)}; ${why}.`;
}

/** The text of a wait's answer: the finished job's whole result, or where the job stands and the next call. */
export function answerText(answer: { delivery_state: string }): string {
  return answer.delivery_state === "delivered"
    ? finishedText(answer)
    : pendingText(answer, pendingHead(answer));
}
