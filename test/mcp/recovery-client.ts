// A throwaway MCP client process for the recovery test: starts a run_job task, prints its reference, then idles.
// Usage: bun recovery-client.ts <client_request_id> <cwd> (environment: the sandbox's).
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { v2Framing } from "./harness.ts";
import { connectStdio } from "./stdio-client.ts";

const [clientRequestId = "recover", cwd = process.cwd()] = process.argv.slice(2);
const env = Object.fromEntries(
  Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
);
const conn = await connectStdio("modern", env, cwd, "recovery-client");
const session = createTaskSessionFromClient(conn.client, {
  endpointId: "awaitless-e2e",
  rawDispatch: conn.tap.rawDispatch,
  v2RequestFraming: v2Framing(conn.client),
});
const execution = await session.callTool("run_job", {
  command: ["sh", "-c", "echo started; sleep 3; echo finished-ok"],
  client_request_id: clientRequestId,
});
if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
process.stdout.write(
  `${JSON.stringify({ reference: execution.serializeReference(), serverPid: conn.pid })}\n`,
);
setInterval(() => {}, 60_000);
