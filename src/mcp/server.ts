// Builds the Awaitless MCP server for one connection, without a transport (stdio.ts and tests connect it).
import { McpServer } from "@modelcontextprotocol/server";
import type { JobServiceApi } from "../core/service-types.ts";
import type { McpConfig } from "./config.ts";
import { SessionFinishedJobs } from "./finished-jobs.ts";
import { JobWatch } from "./job-watch.ts";
import { registerJobResources } from "./resources.ts";
import { registerModernTasks } from "./tasks.ts";
import { registerTasks2025 } from "./tasks-2025.ts";
import { callContext, registerTools, TASKS_EXTENSION } from "./tools.ts";

export type McpEra = "legacy" | "modern";

const INSTRUCTIONS =
  "Awaitless runs commands as durable jobs. Use `run` for any command of unknown duration; if it returns a job_id " +
  "(delivery detached), call `wait_for_job` — it returns the moment the job ends and tells you when to call again. " +
  "Never sleep or poll. Jobs survive this server: a new session finds them with `list_jobs`.";

/** McpServer plus the job watch that announces terminal transitions as `notifications/resources/updated`. */
export class AwaitlessMcpServer extends McpServer {
  readonly watch: JobWatch;
  /** This connection's jobs that ended unannounced (every tool result carries them once). */
  readonly finished: SessionFinishedJobs;
  constructor(service: JobServiceApi, config: McpConfig, era: McpEra) {
    super(
      { name: config.serverName, version: config.serverVersion },
      {
        capabilities: {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: false },
          // Exactly {}: the official requester treats any setting inside as "no tasks".
          extensions: { [TASKS_EXTENSION]: {} },
        },
        instructions: INSTRUCTIONS,
      },
    );
    this.watch = new JobWatch(
      service,
      (uri) => {
        this.server.sendResourceUpdated({ uri }).catch(() => {});
      },
      era === "legacy",
    );
    this.finished = new SessionFinishedJobs(service, this.watch);
  }

  /** URIs a 2026 client subscribed to through subscriptions/listen (seen by the stdio entry). */
  followSubscriptions(uris: string[]): void {
    for (const uri of uris) this.watch.follow(uri).catch(() => {});
  }

  override async close(): Promise<void> {
    this.watch.close();
    await super.close();
  }
}

/**
 * One server instance per connection and era (serveStdio asks once per connection, plus a discover probe).
 * `ending` aborts when the client's input ended: held calls then answer at once.
 */
export function createMcpServer(
  service: JobServiceApi,
  config: McpConfig,
  era: McpEra = "legacy",
  ending?: AbortSignal,
): AwaitlessMcpServer {
  const mcp = new AwaitlessMcpServer(service, config, era);
  const env = { service, config, watch: mcp.watch, finished: mcp.finished, ...(ending ? { ending } : {}) };
  const tools = registerTools(mcp, env);
  registerJobResources(mcp, service, config, mcp.watch, era);
  if (era === "modern") registerModernTasks(mcp, service, config);
  else registerTasks2025(mcp, env, tools, (ctx) => callContext(mcp, env, ctx).hold);
  return mcp;
}
