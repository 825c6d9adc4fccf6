// AwaitlessWire knows which client requests are unanswered: what end of input waits for before the server exits.
import { describe, expect, test } from "bun:test";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { AwaitlessWire } from "../../src/mcp/wire.ts";

/** A transport whose inbound side the test drives and whose outbound side can be made to fail. */
class FakeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  failSends = false;
  readonly sent: JSONRPCMessage[] = [];
  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.onclose?.();
  }
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.failSends) throw new Error("EPIPE");
    this.sent.push(message);
  }
  receive(message: object): void {
    this.onmessage?.({ jsonrpc: "2.0", ...message } as JSONRPCMessage);
  }
}

function wired() {
  const inner = new FakeTransport();
  const wire = new AwaitlessWire(inner, () => {});
  wire.onmessage = () => {};
  return { inner, wire };
}

const answer = (id: number | string) => ({ jsonrpc: "2.0", id, result: {} }) as JSONRPCMessage;

describe("AwaitlessWire: unanswered requests", () => {
  test("resolves once every received request is answered", async () => {
    const { inner, wire } = wired();
    inner.receive({ id: 1, method: "tools/call", params: {} });
    inner.receive({ id: "b", method: "tools/list" });
    inner.receive({ method: "notifications/initialized" });
    expect(wire.unanswered).toBe(2);
    let done: boolean | undefined;
    const waiting = wire.whenAnswered(10_000).then((v) => {
      done = v;
    });
    await wire.send(answer(1));
    await Promise.resolve();
    expect(done).toBeUndefined();
    await wire.send(answer("b"));
    await waiting;
    expect(done).toBe(true);
  });

  test("a cancelled request is withdrawn; a response to a server request settles nothing", async () => {
    const { inner, wire } = wired();
    inner.receive({ id: 7, method: "tools/call", params: {} });
    inner.receive({ id: 8, method: "tools/call", params: {} });
    // The client answering a request of the server's that happens to share an id.
    inner.receive({ id: 8, result: {} });
    expect(wire.unanswered).toBe(2);
    inner.receive({ method: "notifications/cancelled", params: { requestId: 7 } });
    expect(wire.unanswered).toBe(1);
  });

  test("a listen stream is not waited for (it is answered when the connection closes)", async () => {
    const { inner, wire } = wired();
    inner.receive({ id: 3, method: "subscriptions/listen", params: {} });
    expect(await wire.whenAnswered(10_000)).toBe(true);
  });

  test("an answer that cannot be written still settles its request", async () => {
    const { inner, wire } = wired();
    inner.receive({ id: 5, method: "tools/call", params: {} });
    inner.failSends = true;
    await expect(wire.send(answer(5))).rejects.toThrow("EPIPE");
    expect(await wire.whenAnswered(10_000)).toBe(true);
  });

  test("gives up after the bound with the request still counted", async () => {
    const { inner, wire } = wired();
    inner.receive({ id: 9, method: "tools/call", params: {} });
    expect(await wire.whenAnswered(20)).toBe(false);
    expect(wire.unanswered).toBe(1);
  });
});
