// Raw HTTP/1.1 requests for the dashboard's tests: any Host and Origin header, as a rebinding page or another site sends.
import { connect } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const all = {
      host: `127.0.0.1:${port}`,
      connection: "close",
      "content-length": String(Buffer.byteLength(body)),
      ...headers,
    };
    sock.on("connect", () => {
      const lines = Object.entries(all).map(([k, v]) => `${k}: ${v}`);
      sock.write(`${method} ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n${body}`);
    });
    sock.on("data", (c) => chunks.push(Buffer.from(c)));
    sock.on("error", reject);
    sock.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...hl] = head.split("\r\n");
      const hs: Record<string, string> = {};
      for (const l of hl) {
        const i = l.indexOf(":");
        hs[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(" ")[1]), headers: hs, body: rest.join("\r\n\r\n") });
    });
  });
}

/** Reads an SSE stream until `done(event, data)` is true; resolves with the events seen; aborts at the deadline. */
export async function readEvents(
  url: string,
  headers: Record<string, string>,
  done: (event: string, data: unknown) => boolean,
  timeoutMs = 20_000,
): Promise<{ event: string; data: unknown }[]> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  const seen: { event: string; data: unknown }[] = [];
  try {
    const res = await fetch(url, { headers, signal: ctl.signal });
    if (res.status !== 200) throw new Error(`SSE answered ${res.status}`);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) throw new Error("the SSE stream ended");
      buf += dec.decode(value, { stream: true });
      let i = buf.indexOf("\n\n");
      while (i >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) {
          const parsed = JSON.parse(data) as unknown;
          seen.push({ event, data: parsed });
          if (done(event, parsed)) {
            ctl.abort();
            return seen;
          }
        }
        i = buf.indexOf("\n\n");
      }
    }
  } catch (e) {
    if (ctl.signal.aborted && seen.length > 0 && done(seen.at(-1)!.event, seen.at(-1)!.data)) return seen;
    throw new Error(`SSE: ${String(e)}; seen: ${seen.map((s) => s.event).join(", ")}`);
  } finally {
    clearTimeout(timer);
  }
}
