// Connects the official client to serveMcp over an in-memory pipe: the full server stack minus the process.
import { InMemoryTransport } from "@modelcontextprotocol/client";
import type { Transport } from "@modelcontextprotocol/server";
import type { JobServiceApi } from "../../src/core/model/service-api.ts";
import { type McpConfig, resolveMcpConfig } from "../../src/mcp/config.ts";
import { serveMcp } from "../../src/mcp/stdio.ts";
import { type Era, makeClient, TapTransport } from "./harness.ts";

export async function connectInProcess(service: JobServiceApi, era: Era, overrides: Partial<McpConfig> = {}) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const connection = serveMcp(service, resolveMcpConfig(overrides), serverSide as unknown as Transport);
  const tap = new TapTransport(clientSide as unknown as Transport);
  const client = makeClient(era);
  await client.connect(tap);
  return {
    client,
    tap,
    close: async () => {
      await client.close().catch(() => {});
      await connection.close().catch(() => {});
    },
  };
}
