// `logs --follow` as a use case: every new byte of a job's streams, redacted and decoded as it comes, then how the
// follow ended (the job's end, or the caller stopped following a job that keeps running).
import { isTerminal } from "../model/job.ts";
import type { FollowEvent } from "../model/service-api.ts";
import type { ServiceCore } from "../service/service-context.ts";
import { Redactor, StreamRedactor } from "../util/redact.ts";

/** The most of a stream one read takes: what appeared beyond it since the last read is skipped (a gap). */
const FOLLOW_READ_BYTES = 1024 * 1024;

export async function* followLogs(
  svc: ServiceCore,
  jobId: string,
  stream: "stdout" | "stderr" | "both",
  signal?: AbortSignal,
): AsyncGenerator<FollowEvent> {
  const streams = stream === "both" ? (["stdout", "stderr"] as const) : [stream];
  const given: Record<string, number> = { stdout: 0, stderr: 0 };
  // One redactor per stream for the whole follow: it holds back a chunk's end that could begin a secret.
  const redactors = new Map<"stdout" | "stderr", { redactor: StreamRedactor; decoder: TextDecoder }>();
  // The follow ends: what each stream still holds is given, redacted.
  function* flush(): Generator<FollowEvent> {
    for (const [s, r] of redactors) {
      const text = r.redactor.push(r.decoder.decode()) + r.redactor.end();
      if (text) yield { kind: "text", stream: s, text };
    }
  }
  for (;;) {
    const job = await svc.refresh(jobId);
    const backend = svc.backendFor(job);
    for (const s of streams) {
      const t = await backend.readTail(job, s, FOLLOW_READ_BYTES);
      const fresh = t.totalBytes - given[s]!;
      if (fresh <= 0) continue;
      const bytes = t.bytes.subarray(Math.max(0, t.bytes.length - fresh));
      let r = redactors.get(s);
      if (!r) {
        const redactor = new StreamRedactor(new Redactor(Object.values(await backend.secretValues(job))));
        r = { redactor, decoder: new TextDecoder("utf-8") };
        redactors.set(s, r);
      }
      // Bytes the tail no longer holds were never seen: what follows starts mid-stream.
      const gap = fresh > t.bytes.length;
      const text = r.redactor.push(r.decoder.decode(bytes, { stream: true }), gap);
      if (text) yield { kind: "text", stream: s, text };
      given[s] = t.totalBytes;
    }
    if (isTerminal(job.state)) {
      yield* flush();
      const { job_id, state, exit_code, signal: sig, reason, finished_at } = job;
      const result = svc.resultOf(job);
      yield {
        kind: "ended",
        job_id,
        state,
        exit_code,
        signal: sig,
        reason,
        finished_at,
        ...(result ? { result } : {}),
      };
      return;
    }
    if (signal?.aborted) {
      yield* flush();
      yield { kind: "stopped", job_id: job.job_id, state: job.state };
      return;
    }
    await backend.waitForChange(job, svc.settings.pollIntervalMs, signal, true);
  }
}
