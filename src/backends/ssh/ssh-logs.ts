// Reads a remote job's capped logs in one round trip each: the tail (prev + live), or a scan of the whole log.
import type { LogTail, Stream } from "../../core/backend/backend.ts";
import { type LogQuery, type LogScan, lineKeepBytes } from "../../core/logs/log-query.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { LOG_SCAN, READ_LOG } from "../../wrapper/host-scripts.ts";
import { planLog } from "../../wrapper/protocol.ts";
import { parseLogScan } from "./remote-log-scan.ts";
import type { SshHost } from "./ssh-host.ts";

interface RawLog {
  plan: ReturnType<typeof planLog>;
  tail: Uint8Array;
}

async function readRaw(host: SshHost, dir: string, stream: Stream, maxBytes: number): Promise<RawLog> {
  const n = Math.max(0, Math.floor(maxBytes));
  const r = await host.run(READ_LOG, [dir, stream, String(n)]);
  const nl = r.stdout.indexOf(10);
  const sizes = (nl < 0 ? "" : r.stdout.subarray(0, nl).toString()).split(" ").map(Number);
  if (r.code !== 0 || sizes.length !== 4 || sizes.some((x) => !Number.isFinite(x))) {
    throw new AwaitlessError(
      "connection_failed",
      `could not read the ${stream} log of ${dir} on ${host.name}: ${r.stderr.toString().trim() || `exit ${r.code}`}`,
      "retry; check that the job directory still exists on the host",
      { host: host.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
    );
  }
  const [headFileBytes = 0, prevBytes = 0, liveBytes = 0, droppedBytes = 0] = sizes;
  const plan = planLog({ headFileBytes, prevBytes, liveBytes, droppedBytes });
  const tail = r.stdout.subarray(nl + 1);
  return { plan, tail: tail.length > n ? tail.subarray(tail.length - n) : tail };
}

export async function readRemoteTail(
  host: SshHost,
  dir: string,
  stream: Stream,
  maxBytes: number,
): Promise<LogTail> {
  const { plan, tail } = await readRaw(host, dir, stream, maxBytes);
  return { bytes: tail, totalBytes: Math.max(plan.totalBytes, tail.length), droppedBytes: plan.droppedBytes };
}

/** Answers `q` on the host in one round trip (the log never leaves it; only the page's candidate lines do). */
export async function scanRemoteLog(
  host: Pick<SshHost, "run" | "name">,
  dir: string,
  stream: Stream,
  q: LogQuery,
): Promise<LogScan> {
  const mode = q.pattern ? "g" : q.forward ? "f" : "b";
  const args = [
    dir,
    stream,
    mode,
    q.pattern?.source ?? "",
    q.forward ? "1" : "0",
    String(q.from),
    String(q.to ?? 0),
    String(q.limit ?? 0),
    String(q.budget),
    String(lineKeepBytes(q)),
  ];
  const r = await host.run(LOG_SCAN, args);
  const fail = (why: string) =>
    new AwaitlessError(
      "connection_failed",
      `could not scan the ${stream} log of ${dir} on ${host.name} (${why}): ${r.stderr.toString().trim() || `exit ${r.code}`}`,
      "retry; check that the job directory still exists on the host",
      { host: host.name, remote_stderr: r.stderr.toString().slice(0, 2000) },
    );
  if (r.code !== 0) throw fail(`exit ${r.code}`);
  return parseLogScan(r.stdout, r.stderr.toString(), q, fail);
}
