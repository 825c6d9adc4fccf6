// Tool results: structuredContent with protocol field names, a short human text, resource links, error results.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { AwaitlessError } from "../core/model/errors.ts";
import type { JobState } from "../core/model/job.ts";
import { isDelivered, type WaitResponse, withNext } from "../core/model/service-api.ts";
import { compactAnswer } from "./compact.ts";

export const JOB_URI_PREFIX = "awaitless://jobs/";
export const jobUri = (jobId: string): string => `${JOB_URI_PREFIX}${jobId}`;

export function resourceLink(jobId: string): CallToolResult["content"][number] {
  return {
    type: "resource_link",
    uri: jobUri(jobId),
    name: jobId,
    mimeType: "application/json",
  };
}

/**
 * A wait-like answer's tool result (docs/protocol.md, "Waiting and delivery"): compact structuredContent, and the text that
 * holds the same result in words (each client's model reads one of the two: docs/mcp.md).
 */
export function answerResult(
  answer: object,
  text: string,
  opts: { jobId?: string; isError?: boolean } = {},
): CallToolResult {
  return toolResult(compactAnswer(answer), text, opts);
}

/** A successful tool result: the object as structuredContent, plus a short text (and a link when a job is named). */
export function toolResult(
  structured: object,
  text: string,
  opts: { jobId?: string; isError?: boolean } = {},
): CallToolResult {
  const content: CallToolResult["content"] = [{ type: "text", text }];
  if (opts.jobId !== undefined) content.push(resourceLink(opts.jobId));
  const result: CallToolResult = { content, structuredContent: structured as Record<string, unknown> };
  if (opts.isError) result.isError = true;
  return result;
}

/** The one wrapper from any thrown error to an `isError` result carrying code, message and hint. */
export function errorResult(error: unknown): CallToolResult {
  const err =
    error instanceof AwaitlessError
      ? error
      : new AwaitlessError(
          "internal",
          `Internal error: ${error instanceof Error ? error.message : String(error)}`,
          "This is a bug in Awaitless; retry once, and report it with the server's stderr if it repeats.",
        );
  return {
    isError: true,
    content: [{ type: "text", text: `${err.code}: ${err.message}\nNext: ${err.mcpHint}` }],
    structuredContent: { error: err.toWire("mcp") },
  };
}

/** Silence after which a pending answer offers cancel_job (a stalled job always gets the offer). */
export const QUIET_CANCEL_SECONDS = 300;

/** A job waiting out a retry's backoff: what status_message says of it (next_attempt_at set), else undefined. */
export type RetryWaitText = string | undefined;

export function nextWaitAction(
  jobId: string,
  state: JobState,
  quietSeconds?: number,
  retryWait?: RetryWaitText,
): string {
  const stuck =
    state === "stalled"
      ? "It has stalled (no output past its stall timeout)"
      : quietSeconds !== undefined && quietSeconds >= QUIET_CANCEL_SECONDS
        ? `It has made no output for ${formatSeconds(quietSeconds)}`
        : undefined;
  return (
    `Job ${jobId} is still ${state}${retryWait ? `, ${retryWait}` : ""}: only this wait ended, the job was not killed or changed. ` +
    `Call wait_for_job with {"job_id":"${jobId}"} to keep waiting, or get_job_logs to look at its output so far.` +
    (stuck ? ` ${stuck}: if it is stuck, call cancel_job with {"job_id":"${jobId}"}.` : "")
  );
}

export function nextDetachedAction(jobId: string, state: JobState, retryWait?: RetryWaitText): string {
  const how = retryWait
    ? `is ${retryWait}; it goes on`
    : `keeps ${state === "queued" ? "waiting in its queue" : "running"}`;
  return (
    `Job ${jobId} ${how} in the background. ` +
    `Call wait_for_job with {"job_id":"${jobId}"} to collect the result (no polling needed), ` +
    `or subscribe to ${jobUri(jobId)}.`
  );
}

/** The retry wait a status or pending answer describes (its next_attempt_at set), as its status_message words it. */
export function retryWaitOf(r: { next_attempt_at?: string; status_message?: string | null }): RetryWaitText {
  return r.next_attempt_at && r.status_message ? r.status_message : undefined;
}

/** MCP surface of a wait-like response: next_action names the MCP call; the CLI's next_command is dropped. */
export function mcpWait<T extends WaitResponse>(resp: T, quietSeconds?: number): T {
  let out = { ...resp };
  delete out.next_command;
  if (out.delivery_state === "pending") {
    out = withNext(out, {
      next_action: out.host_unreachable
        ? `The job's host cannot be reached now; job ${out.job_id} keeps its state (${out.job_state}) and may still ` +
          `be running. Call wait_for_job with {"job_id":"${out.job_id}"} again once the host is reachable.`
        : nextWaitAction(out.job_id, out.job_state, quietSeconds, retryWaitOf(out)),
    });
    // A held call may end many times before the job does: each pending answer carries only a short tail, so
    // repeated waits do not re-send the whole budget (get_job_logs reads the whole log).
    for (const key of ["stdout_tail", "stderr_tail"] as const) {
      const tail = out[key];
      if (tail === undefined) continue;
      const bounded = boundedTail(tail, PENDING_TAIL_LINES, PENDING_TAIL_BYTES);
      if (bounded === tail.replace(/\n+$/, "")) continue; // nothing cut: the tail stays as read
      out[key] = bounded;
      out.truncated = true;
    }
  } else delete out.next_action;
  return out;
}

/** A finished job that did not succeed (the tool result is an error result); a pending answer is not. */
export function isFailure(resp: WaitResponse): boolean {
  return isDelivered(resp) && resp.state !== "succeeded";
}

export function formatSeconds(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${seconds < 10 ? Number(seconds.toFixed(1)) : s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

function lastLines(text: string, count: number): string {
  const lines = text.replace(/\n+$/, "").split("\n");
  return lines.slice(-count).join("\n").trim() === "" ? "" : lines.slice(-count).join("\n");
}

/** Lines and bytes of a still-running job's tails in each pending answer. */
const PENDING_TAIL_LINES = 20;
const PENDING_TAIL_BYTES = 2048;

/** The last `count` lines, at most `maxBytes` (cut at a character boundary from the end). */
export function boundedTail(text: string, count: number, maxBytes: number): string {
  const tail = lastLines(text, count);
  const bytes = Buffer.from(tail);
  if (bytes.length <= maxBytes) return tail;
  let start = bytes.length - maxBytes;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return `…${bytes.subarray(start).toString("utf8")}`;
}
