// The host programs (src/wrapper/host/*.sh): the small POSIX sh programs the client runs on a job's machine beside
// the wrapper, and the parsers of their generic outputs. Each is fed to `sh -s` on stdin (so a login shell only
// ever sees `sh -s`, and nothing secret appears in a process list); arguments travel in a quoted `set --` line.
// Each .sh file's header documents its arguments and its output; the output is parsed here or beside its caller.
import type { QueueSnapshot } from "../core/backend/backend.ts";
import artifactFiles from "./host/artifact-files.sh" with { type: "text" };
import artifacts from "./host/artifacts.sh" with { type: "text" };
import artifactsBatch from "./host/artifacts-batch.sh" with { type: "text" };
import jobDirPresent from "./host/job-dir-present.sh" with { type: "text" };
import launch from "./host/launch.sh" with { type: "text" };
import logScan from "./host/log-scan.sh" with { type: "text" };
import observe from "./host/observe.sh" with { type: "text" };
import prepare from "./host/prepare.sh" with { type: "text" };
import queueSnapshot from "./host/queue-snapshot.sh" with { type: "text" };
import readLog from "./host/read-log.sh" with { type: "text" };
import remove from "./host/remove.sh" with { type: "text" };
import settle from "./host/settle.sh" with { type: "text" };
import trackProbe from "./host/track-probe.sh" with { type: "text" };
import watch from "./host/watch.sh" with { type: "text" };
import { parseKeyValue } from "./records.ts";
import { assemble, hostProgram } from "./shell-text.ts";
import { shellQuote } from "./spec-render.ts";

/** The exec command line for every host program. */
export const REMOTE_SHELL_COMMAND = "sh -s";

/** The text fed to `sh -s`: the arguments, then the program. */
export function script(body: string, args: readonly string[]): string {
  return `set -- ${args.map(shellQuote).join(" ")}\n${body}`;
}

export const PREPARE = hostProgram(prepare);
export const JOB_DIR_PRESENT = hostProgram(jobDirPresent);
export const OBSERVE = hostProgram(observe);
export const READ_LOG = hostProgram(readLog);
export const LOG_SCAN = hostProgram(logScan);
export const REMOVE = hostProgram(remove);
export const SETTLE = hostProgram(settle);
export const WATCH = hostProgram(watch);
export const QUEUE_SNAPSHOT = hostProgram(queueSnapshot);
export const TRACK_PROBE = hostProgram(trackProbe);
export const ARTIFACT_FILES = hostProgram(artifactFiles);
/** artifacts.sh with B, its per-batch program (run by `find -exec sh -c`), defined first. */
export const ARTIFACTS = `B=${shellQuote(hostProgram(artifactsBatch))}\n${hostProgram(artifacts)}`;
const LAUNCH = hostProgram(launch);

/** The .sh files as they run (assembled, comments kept): what the shellcheck test checks. */
export const HOST_PROGRAM_FILES = {
  "artifact-files.sh": artifactFiles,
  "artifacts.sh": artifacts,
  "artifacts-batch.sh": artifactsBatch,
  "job-dir-present.sh": jobDirPresent,
  "launch.sh": launch,
  "log-scan.sh": logScan,
  "observe.sh": observe,
  "prepare.sh": prepare,
  "queue-snapshot.sh": queueSnapshot,
  "read-log.sh": readLog,
  "remove.sh": remove,
  "settle.sh": settle,
  "track-probe.sh": trackProbe,
  "watch.sh": watch,
} as const;
export { assemble };

/** A heredoc delimiter that does not occur as a line of `text`. */
export function heredocDelimiter(text: string): string {
  const lines = new Set(text.split("\n"));
  for (let i = 0; ; i++) {
    const d = `AWL_END_${Math.random().toString(36).slice(2, 10)}_${i}`;
    if (!lines.has(d)) return d;
  }
}

/** `awl_spec`, which launch.sh calls: prints spec.sh from a quoted heredoc (taken literally). */
export function specFunction(specText: string): string {
  const delim = heredocDelimiter(specText);
  const body = specText.endsWith("\n") ? specText : `${specText}\n`;
  return `awl_spec() {\ncat <<'${delim}'\n${body}${delim}\n}\n`;
}

/** launch.sh for one job: its spec.sh travels inside the program (stdin), never on a command line. */
export function launchScript(specText: string): string {
  return specFunction(specText) + LAUNCH;
}

/** The `key=value` lines of prepare.sh, launch.sh and job-dir-present.sh (other lines are ignored). */
export const keyValues = parseKeyValue;

/** How a host tracks a job's processes (track-probe.sh; its header documents the lines). */
export interface TrackProbe {
  tracking: "cgroup" | "environment";
  why: string;
  cpu: "cgroup" | "rusage";
  memory: "cgroup" | "none";
  environ: boolean;
}

export function parseTrackProbe(text: string): TrackProbe | null {
  const kv = parseKeyValue(text);
  if (kv.tracking !== "cgroup" && kv.tracking !== "environment") return null;
  return {
    tracking: kv.tracking,
    why: kv.why ?? "",
    cpu: kv.cpu === "cgroup" ? "cgroup" : "rusage",
    memory: kv.memory === "cgroup" ? "cgroup" : "none",
    environ: kv.environ === "1",
  };
}

/** The doctor's sentence for a probe: which tracking, why, and what resources it gives. */
export function trackProbeWords(p: TrackProbe): string {
  const what =
    p.tracking === "cgroup"
      ? `each job gets its own cgroup (${p.why.replace(/^by cgroup /, "like ")}): every process it starts is found and stopped`
      : `processes are found by AWAITLESS_JOB_ID in their environment and the command's session (${p.why.replace(/^by environment: /, "")}); a process that clears its environment and leaves the session is not seen`;
  const cost = `CPU time from ${p.cpu === "cgroup" ? "the cgroup" : "the command's reaped processes"}, peak memory ${p.memory === "cgroup" ? "from the cgroup" : "not measured"}`;
  return `${what}; ${cost}`;
}

/** Parses queue-snapshot.sh's lines (its header documents them); waiting jobs in ticket (FIFO) order. */
export function parseQueueSnapshot(text: string): QueueSnapshot {
  const snap: QueueSnapshot = { running: [], waiting: [] };
  for (const line of text.split("\n")) {
    const m = /^([RW]) (\S+) ?(\S*)$/.exec(line);
    if (!m) continue;
    const queue = m[3] === "" ? null : m[3]!;
    if (m[1] === "R") {
      snap.running.push({ job_id: m[2]!, queue });
      continue;
    }
    const name = m[2]!;
    const dot = name.indexOf(".");
    const ticket = Number(name.slice(0, dot));
    if (dot > 0 && Number.isSafeInteger(ticket))
      snap.waiting.push({ job_id: name.slice(dot + 1), queue, ticket });
  }
  snap.waiting.sort((a, b) => a.ticket - b.ticket);
  return snap;
}
