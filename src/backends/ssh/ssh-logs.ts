// Reads a remote job's capped logs (head, gap, prev, live) in one round trip each, like the local reader.
import type { FullLog, LogTail, Stream } from "../../core/backend.ts";
import { AwaitlessError } from "../../core/errors.ts";
import { planLog } from "../../wrapper/protocol.ts";
import { READ_LOG } from "./remote-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

interface RawLog {
  plan: ReturnType<typeof planLog>;
  head: Uint8Array;
  tail: Uint8Array;
}

async function readRaw(
  host: SshHost,
  dir: string,
  stream: Stream,
  maxBytes: number,
  full: boolean,
): Promise<RawLog> {
  const n = Math.max(0, Math.floor(maxBytes));
  const r = await host.run(READ_LOG, [dir, stream, String(n), full ? "full" : "tail"]);
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
  const body = r.stdout.subarray(nl + 1);
  const headLen = full && droppedBytes > 0 ? Math.min(plan.headBytes, n, body.length) : 0;
  const tail = body.subarray(headLen);
  return {
    plan,
    head: body.subarray(0, headLen),
    tail: tail.length > n ? tail.subarray(tail.length - n) : tail,
  };
}

export async function readRemoteTail(
  host: SshHost,
  dir: string,
  stream: Stream,
  maxBytes: number,
): Promise<LogTail> {
  const { plan, tail } = await readRaw(host, dir, stream, maxBytes, false);
  return { bytes: tail, totalBytes: Math.max(plan.totalBytes, tail.length), droppedBytes: plan.droppedBytes };
}

export async function readRemoteLog(
  host: SshHost,
  dir: string,
  stream: Stream,
  maxBytes: number,
): Promise<FullLog> {
  const { plan, head, tail } = await readRaw(host, dir, stream, maxBytes, true);
  const inTail = plan.prevBytes + plan.liveBytes;
  if (plan.droppedBytes === 0) {
    return { text: tail, totalBytes: plan.totalBytes, droppedBytes: 0, truncated: tail.length < inTail };
  }
  const omitted = plan.omittedBytes + Math.max(0, inTail - tail.length) + (plan.headBytes - head.length);
  const marker = Buffer.from(`\n[… ${omitted} bytes dropped by the log cap …]\n`);
  return {
    text: Buffer.concat([head, marker, tail]),
    totalBytes: plan.totalBytes,
    droppedBytes: plan.droppedBytes,
    truncated: true,
  };
}
