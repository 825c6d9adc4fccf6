// `awaitless mcp`: serves both protocol generations on one stdio pipe; stdout carries protocol only.
import type { Transport } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import type { JobServiceApi } from "../core/service-types.ts";
import { applyMcpEnv, type McpConfig } from "./config.ts";
import { type AwaitlessMcpServer, createMcpServer } from "./server.ts";
import { AwaitlessWire } from "./wire.ts";

export interface McpConnection {
  /** Resolves when the transport closed (the client closed stdin). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves one connection over any stdio-shaped transport: the SDK's entry decides the era from the first
 * message (2025 `initialize` or a 2026 envelope) and pins one server instance from our factory.
 */
export function serveMcp(service: JobServiceApi, config: McpConfig, transport: Transport): McpConnection {
  let modern: AwaitlessMcpServer | undefined;
  const wire = new AwaitlessWire(transport, (uris) => modern?.followSubscriptions(uris));
  const handle = serveStdio(
    ({ era }) => {
      const server = createMcpServer(service, config, era);
      if (era === "modern") modern = server;
      return server;
    },
    { transport: wire, onerror: (error) => process.stderr.write(`awaitless mcp: ${error.message}\n`) },
  );
  return { closed: wire.closed, close: () => handle.close() };
}

/** Anything printed by accident must not corrupt the protocol stream: console output goes to stderr. */
function keepStdoutForProtocol(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/** Serves stdin/stdout until the client closes stdin. Env `AWAITLESS_MCP_*` overrides `config`. */
export async function runMcpStdio(service: JobServiceApi, config: McpConfig): Promise<void> {
  keepStdoutForProtocol();
  const connection = serveMcp(service, applyMcpEnv(config, process.env), new StdioServerTransport());
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
  }
}
