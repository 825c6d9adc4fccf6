// Server-sent event streams: the live feed for the pages, and one job's log follow.
import type { JobServiceApi } from "../core/model/service-api.ts";

type Send = (event: string, data: unknown) => void;

/**
 * Heartbeat comment: keeps proxies and `ssh -L` from closing a quiet stream, lets the page see a stream that went
 * silent (it reconnects after missing three), and finds a client that went away (the write fails).
 */
export const HEARTBEAT_MS = 15_000;

/** An SSE response fed by `open(send)`; the function it resolves to is called once the page goes away. */
export function sseResponse(req: Request, open: (send: Send) => Promise<() => void>): Response {
  let close: (() => void) | undefined;
  let beat: ReturnType<typeof setInterval> | undefined;
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send: Send = (event, data) => {
        try {
          controller.enqueue(enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
        } catch {}
      };
      controller.enqueue(enc.encode(": awaitless\n\n"));
      beat = setInterval(() => {
        try {
          controller.enqueue(enc.encode(": keep-alive\n\n"));
        } catch {}
      }, HEARTBEAT_MS);
      const end = () => {
        clearInterval(beat);
        close?.();
        close = undefined;
      };
      req.signal.addEventListener("abort", end, { once: true });
      close = await open(send);
      if (req.signal.aborted) end();
    },
    cancel() {
      clearInterval(beat);
      close?.();
      close = undefined;
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no" },
  });
}

/** GET /api/jobs/ID/follow: `text` events with new (redacted) log text, then `ended` or `stopped`. */
export function followStream(req: Request, service: JobServiceApi, jobId: string): Response {
  return sseResponse(req, async (send) => {
    const ctl = new AbortController();
    (async () => {
      try {
        for await (const ev of service.followLogs(jobId, "both", ctl.signal)) send(ev.kind, ev);
      } catch (e) {
        send("follow_error", { message: String((e as Error)?.message ?? e) });
      }
    })();
    return () => ctl.abort();
  });
}
