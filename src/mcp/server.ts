// Builds the Awaitless MCP server for one connection, without a transport (stdio.ts and tests connect it).
import { McpServer } from "@modelcontextprotocol/server";
import type { JobServiceApi } from "../core/model/service-api.ts";
import { callContext, TASKS_EXTENSION } from "./call-context.ts";
import { CHANNEL_CAPABILITY, CHANNEL_METHOD, SessionChannel } from "./channel.ts";
import { knownClient } from "./clients.ts";
import type { McpConfig } from "./config.ts";
import { SessionFinishedJobs } from "./finished-jobs.ts";
import { JobWatch } from "./job-watch.ts";
import { registerJobResources } from "./resources.ts";
import { registerModernTasks } from "./tasks.ts";
import { executionOf, registerTasks2025 } from "./tasks-2025.ts";
import { registerTools } from "./tools/register.ts";

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
  /** Claude Code channel events (2025-era connections only: Claude Code has no channel path on 2026 ones). */
  readonly channel: SessionChannel | undefined;
  constructor(service: JobServiceApi, config: McpConfig, era: McpEra) {
    super(
      { name: config.serverName, version: config.serverVersion },
      {
        capabilities: {
          resources: { subscribe: true, listChanged: false },
          // Exactly {}: the official requester treats any setting inside as "no tasks".
          extensions: { [TASKS_EXTENSION]: {} },
          ...(era === "legacy" && { experimental: { [CHANNEL_CAPABILITY]: {} } }),
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
    if (era === "legacy") {
      const finished = this.finished;
      const channel = new SessionChannel({
        service,
        listening: () =>
          listensToChannel(this.server.getClientVersion()?.name, this.server.getClientCapabilities()),
        unheard: (jobId) => finished.isUnheard(jobId),
        nameOf: (jobId) => finished.nameOf(jobId),
        send: (event) => this.server.notification({ method: CHANNEL_METHOD, params: { ...event } }),
      });
      finished.onUnheardEnd((jobId) => channel.ended(jobId));
      this.channel = channel;
    }
  }

  /** URIs a 2026 client subscribed to through subscriptions/listen (seen by the stdio entry). */
  followSubscriptions(uris: string[]): void {
    for (const uri of uris) this.watch.follow(uri).catch(() => {});
  }

  override async close(): Promise<void> {
    this.watch.close();
    this.channel?.close();
    await super.close();
  }
}

/** Claude Code (by name), or any client that declares the channel capability itself, reads channel events. */
function listensToChannel(
  name: string | undefined,
  capabilities: { experimental?: object } | undefined,
): boolean {
  return knownClient(name)?.channel === true || CHANNEL_CAPABILITY in (capabilities?.experimental ?? {});
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
  registerTools(mcp, env, era === "legacy" ? (name) => executionOf(mcp, name) : undefined);
  registerJobResources(mcp, service, config, mcp.watch, era);
  if (era === "modern") registerModernTasks(mcp, service, config);
  else registerTasks2025(mcp, env, (ctx) => callContext(mcp, env, ctx).hold);
  return mcp;
}
