// The stdio wire edge: strips the SDK's `content: []` from task handles, reports acknowledged listen subscriptions,
// and knows which requests are still unanswered (end of input waits for them).
import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";

type Json = Record<string, unknown>;

/**
 * The SDK normalizes every tools/call result as a CallToolResult, which adds `content: []` to a
 * `resultType: "task"` handle (and the 2025 schema insists on it for `{task}` results). The Tasks
 * spec shape has no `content`, so it is removed here, where nothing validates any more.
 */
export function stripTaskContent(message: JSONRPCMessage): JSONRPCMessage {
  const result = (message as { result?: Json }).result;
  if (result === undefined || !Array.isArray(result.content) || result.content.length > 0) return message;
  const isModernTask = result.resultType === "task";
  const isLegacyTask =
    typeof result.task === "object" && result.task !== null && !("structuredContent" in result);
  if (!isModernTask && !isLegacyTask) return message;
  const { content: _dropped, ...rest } = result;
  return { ...(message as Json), result: rest } as JSONRPCMessage;
}

/** Resource URIs a `notifications/subscriptions/acknowledged` confirms, or undefined for other messages. */
export function acknowledgedResourceUris(message: JSONRPCMessage): string[] | undefined {
  const note = message as {
    method?: string;
    params?: { notifications?: { resourceSubscriptions?: unknown } };
  };
  if (note.method !== "notifications/subscriptions/acknowledged") return undefined;
  const uris = note.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === "string") : undefined;
}

type Id = string | number;

/** The id of a request from the client that expects an answer; a listen stream is answered when the connection closes. */
function requestId(message: JSONRPCMessage): Id | undefined {
  const m = message as { id?: Id; method?: string };
  return m.id !== undefined && typeof m.method === "string" && m.method !== "subscriptions/listen"
    ? m.id
    : undefined;
}

/** The request a client's cancellation withdraws (the server never answers it). */
function withdrawnId(message: JSONRPCMessage): Id | undefined {
  const m = message as { method?: string; params?: { requestId?: Id } };
  return m.method === "notifications/cancelled" ? m.params?.requestId : undefined;
}

/** The request an outgoing result or error answers. */
function answeredId(message: JSONRPCMessage): Id | undefined {
  const m = message as { id?: Id; method?: string };
  return m.method === undefined ? m.id : undefined;
}

/** Wraps the real transport; everything passes through except the two adjustments above. */
export class AwaitlessWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  sessionId?: string;
  /** Resolves when the underlying transport closed (the entry closed it, or it failed). */
  readonly closed: Promise<void>;
  private markClosed: () => void = () => {};
  private readonly pending = new Set<Id>();
  private onAllAnswered: Array<() => void> = [];

  constructor(
    private readonly inner: Transport,
    private readonly onListenAcknowledged: (uris: string[]) => void,
  ) {
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    inner.onclose = () => {
      this.onclose?.();
      this.markClosed();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      const id = requestId(message);
      if (id !== undefined) this.pending.add(id);
      else this.settle(withdrawnId(message));
      this.onmessage?.(message, extra);
    };
  }

  /** Resolves true once every request received so far has been answered (false if `timeoutMs` passed first). */
  whenAnswered(timeoutMs: number): Promise<boolean> {
    if (this.pending.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.onAllAnswered = this.onAllAnswered.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.onAllAnswered.push(waiter);
    });
  }

  /** How many requests are still unanswered. */
  get unanswered(): number {
    return this.pending.size;
  }

  private settle(id: Id | undefined): void {
    if (id === undefined || !this.pending.delete(id) || this.pending.size > 0) return;
    for (const resolve of this.onAllAnswered.splice(0)) resolve();
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(stripTaskContent(message), options);
    } finally {
      // Answered, or it never can be (the output is gone): either way nothing is left to wait for.
      this.settle(answeredId(message));
    }
    const uris = acknowledgedResourceUris(message);
    if (uris !== undefined && uris.length > 0) this.onListenAcknowledged(uris);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}
