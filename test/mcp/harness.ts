// Test harness: the official v2 client (and the ext-tasks requester) against our server, in process or over stdio.
import { Client } from "@modelcontextprotocol/client";
import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";
import { until } from "../helpers/until.ts";

export type Era = "legacy" | "modern";
type Json = Record<string, unknown>;

export interface WireEntry {
  dir: ">>" | "<<";
  message: Json;
}

interface RawResponse {
  kind: "result" | "error";
  result?: unknown;
  error?: unknown;
}

/**
 * Client-side transport wrapper: records every message both ways (for schema validation) and gives the
 * ext-tasks requester its `rawDispatch` over the same pipe (string ids `raw-N`, answered before the SDK sees them).
 */
export class TapTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  readonly log: WireEntry[] = [];
  private nextRawId = 1;
  private readonly pendingRaw = new Map<string, (response: RawResponse) => void>();

  constructor(private readonly inner: Transport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (received, extra) => {
      // Through JSON, as on a real pipe (an in-memory pipe would otherwise keep `undefined` members).
      const message = JSON.parse(JSON.stringify(received)) as JSONRPCMessage;
      this.log.push({ dir: "<<", message: message as Json });
      const id = (message as { id?: unknown }).id;
      if (typeof id === "string" && this.pendingRaw.has(id)) {
        const settle = this.pendingRaw.get(id)!;
        this.pendingRaw.delete(id);
        const m = message as { result?: unknown; error?: unknown };
        settle(
          m.error !== undefined ? { kind: "error", error: m.error } : { kind: "result", result: m.result },
        );
        return;
      }
      this.onmessage?.(message, extra);
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.log.push({ dir: ">>", message: message as Json });
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** ext-tasks `rawDispatch`: one JSON-RPC request on this pipe, its response returned raw. */
  rawDispatch = async (request: unknown, options?: { signal?: AbortSignal }): Promise<never> => {
    const id = `raw-${this.nextRawId++}`;
    const response = new Promise<RawResponse>((resolve, reject) => {
      this.pendingRaw.set(id, resolve);
      options?.signal?.addEventListener("abort", () => reject(options.signal?.reason), { once: true });
    });
    await this.send({ jsonrpc: "2.0", id, ...(request as Json) } as JSONRPCMessage);
    return (await response) as never;
  };

  /** Messages (in either direction) with this method, or responses to requests with this method. */
  exchanges(method: string): WireEntry[] {
    const ids = new Set(this.log.filter((e) => e.message.method === method).map((e) => e.message.id));
    return this.log.filter(
      (e) => e.message.method === method || (e.message.method === undefined && ids.has(e.message.id)),
    );
  }
}

export function makeClient(
  era: Era,
  name = "awaitless-test",
  capabilities: Record<string, unknown> = {},
): Client {
  return new Client(
    { name, version: "0.0.0" },
    {
      capabilities: capabilities as never,
      versionNegotiation: { mode: era === "modern" ? { pin: "2026-07-28" } : "legacy" },
    },
  );
}

/** Framing the ext-tasks requester needs for 2026 raw requests on this client. */
export function v2Framing(client: Client) {
  return {
    protocolVersion: client.getNegotiatedProtocolVersion() ?? "2026-07-28",
    clientInfo: { name: "awaitless-test", version: "0.0.0" },
    clientCapabilities: {},
  };
}

/** The tests' one poll-until (test/helpers/until.ts), with the MCP tests' argument order. */
export function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<T> {
  return until(what, check, timeoutMs, 20) as Promise<T>;
}

export function structured<T = Json>(result: unknown): T {
  return (result as { structuredContent: T }).structuredContent;
}

export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}
