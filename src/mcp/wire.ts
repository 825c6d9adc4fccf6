// The stdio wire edge: strips the SDK's `content: []` from task handles and reports acknowledged listen subscriptions.
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

/** Wraps the real transport; everything passes through except the two adjustments above. */
export class AwaitlessWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  sessionId?: string;
  /** Resolves when the underlying transport closed (stdin reached end-of-file or the entry closed it). */
  readonly closed: Promise<void>;
  private markClosed: () => void = () => {};

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
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    await this.inner.send(stripTaskContent(message), options);
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
