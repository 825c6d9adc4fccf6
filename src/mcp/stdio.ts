// `awaitless mcp`: serves both protocol generations on one stdio pipe; stdout carries protocol only.
import { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import type { JobServiceApi } from "../core/model/service-api.ts";
import { applyMcpEnv, type McpConfig } from "./config.ts";
import { boundedErrorResponse } from "./echo-bounds.ts";
import { checkRequestLine, type LineVerdict } from "./request-check.ts";
import { MAX_REQUEST_LINE_BYTES, RequestLines } from "./request-lines.ts";
import { type AwaitlessMcpServer, createMcpServer } from "./server.ts";
import { diagnose, finishDiagnostics, OutputSink, readStdin } from "./stdio-streams.ts";
import { AwaitlessWire } from "./wire.ts";

/** At end of input, how long requests already received may take to be answered before the server exits anyway. */
export const EOF_ANSWER_BACKSTOP_MS = 60_000;

/** How long the exit waits for diagnostics a client is slow to read (they must never hold the server up). */
const STDERR_FLUSH_MS = 5_000;

export interface McpConnection {
  /** Resolves when the transport closed (the entry closed it, or stdout failed). */
  closed: Promise<void>;
  /** Resolves true once every request received so far has been answered (false: `timeoutMs` passed first). */
  answered(timeoutMs: number): Promise<boolean>;
  /** Requests received and not yet answered. */
  unanswered(): number;
  close(): Promise<void>;
}

/**
 * Serves one connection over any stdio-shaped transport: the SDK's entry decides the era from the first
 * message (2025 `initialize` or a 2026 envelope) and pins one server instance from our factory.
 */
export function serveMcp(
  service: JobServiceApi,
  config: McpConfig,
  transport: Transport,
  ending?: AbortSignal,
): McpConnection {
  let modern: AwaitlessMcpServer | undefined;
  const wire = new AwaitlessWire(transport, (uris) => modern?.followSubscriptions(uris));
  const handle = serveStdio(
    ({ era }) => {
      const server = createMcpServer(service, config, era, ending);
      if (era === "modern") modern = server;
      return server;
    },
    { transport: wire, onerror: (error) => diagnose(error.message) },
  );
  return {
    closed: wire.closed,
    answered: (timeoutMs) => wire.whenAnswered(timeoutMs),
    unanswered: () => wire.unanswered,
    close: () => handle.close(),
  };
}

/**
 * stdin as the SDK's transport sees it: whole request lines only, none over MAX_REQUEST_LINE_BYTES
 * (those go to `onOversized`), each one JSON-RPC message (request-check.ts; a line that is not goes to
 * `onRefused`, to be answered). Its end (or failure) goes to `onEnd` instead, so the transport stays open to
 * answer what was already received; the SDK would close it at once.
 */
class InputWithoutEnd extends EventEmitter {
  readonly readableEnded = false;
  readonly destroyed = false;
  private stop: () => void = () => {};

  constructor(
    source: typeof readStdin,
    onEnd: () => void,
    onOversized: (bytes: number, id: string | number | null) => void,
    onRefused: (answer: Extract<LineVerdict, { kind: "answer" }>) => void,
  ) {
    super();
    const lines = new RequestLines((line) => {
      const verdict = checkRequestLine(line);
      if (verdict.kind === "forward") this.emit("data", verdict.line);
      else if (verdict.kind === "answer") onRefused(verdict);
    }, onOversized);
    // Read only once the transport listens, so no chunk arrives before it can take it.
    this.once("newListener", (event: string) => {
      if (event !== "data") return;
      this.stop = source((chunk) => lines.push(chunk), onEnd);
    });
  }

  /** The transport closed: read no more. */
  pause(): this {
    this.stop();
    return this;
  }
}

/** Every JSON-RPC error answer leaves with its message bounded: it may quote what the client sent (a 1 MB name). */
function withBoundedErrors(transport: StdioServerTransport): StdioServerTransport {
  const send = transport.send.bind(transport);
  transport.send = (message) => send(boundedErrorResponse(message));
  return transport;
}

/** Anything printed by accident must not corrupt the protocol stream: console output goes to stderr. */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/**
 * Serves stdin/stdout until the client closes stdin, then answers every request it had received (held calls
 * answer at once with what they have), writes every response out, and returns. Env `AWAITLESS_MCP_*`
 * overrides `config`.
 */
export async function runMcpStdio(service: JobServiceApi, config: McpConfig): Promise<void> {
  keepStdoutForProtocol();
  const ending = new AbortController();
  const endOfInput = async () => {
    ending.abort();
    if (!(await connection.answered(EOF_ANSWER_BACKSTOP_MS))) {
      diagnose(
        `input ended; ${connection.unanswered()} request(s) still unanswered after ${EOF_ANSWER_BACKSTOP_MS / 1000}s, closing anyway`,
      );
    }
    await connection.close();
  };
  const refuseOversized = (bytes: number, id: string | number | null) => {
    const limit = `${MAX_REQUEST_LINE_BYTES / (1024 * 1024)} MiB`;
    diagnose(`refused a request line of ${bytes} bytes (over ${limit}); still serving`);
    const message =
      `Request refused: its line is ${bytes} bytes, over the ${limit} a request may have; it was not read. ` +
      "Send smaller arguments (for example a file path instead of the file's content).";
    transport
      .send({ jsonrpc: "2.0", id, error: { code: -32600, message } } as unknown as JSONRPCMessage)
      .catch(() => {});
  };
  const refuseLine = (answer: { id: string | number | null; code: number; message: string }) => {
    diagnose(`answered a request line that is not a JSON-RPC message (${answer.code}); still serving`);
    transport
      .send({
        jsonrpc: "2.0",
        id: answer.id,
        error: { code: answer.code, message: answer.message },
      } as unknown as JSONRPCMessage)
      .catch(() => {});
  };
  const input = new InputWithoutEnd(
    readStdin,
    () => {
      endOfInput().catch(() => {});
    },
    refuseOversized,
    refuseLine,
  );
  const output = new OutputSink();
  const transport = withBoundedErrors(
    new StdioServerTransport(input as unknown as Readable, output as unknown as Writable, {
      maxBufferSize: MAX_REQUEST_LINE_BYTES + 1,
    }),
  );
  const connection = serveMcp(service, applyMcpEnv(config, process.env), transport, ending.signal);
  const stop = () => {
    connection.close().catch(() => {});
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  try {
    await connection.closed;
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
    await connection.close().catch(() => {});
    // Responses and diagnostics are queued on asynchronous streams: exit only once they are written (the
    // protocol whatever it takes; diagnostics for a bounded time).
    await Promise.all([output.finish(), finishDiagnostics(STDERR_FLUSH_MS)]);
  }
}
