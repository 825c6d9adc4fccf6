// The job resource `awaitless://jobs/{job_id}`: template, list, read (status + bounded tails), 2025 subscribe.
import {
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
} from "@modelcontextprotocol/server";
import { AwaitlessError } from "../core/model/errors.ts";
import { isTerminal } from "../core/model/job.ts";
import { isDelivered, type JobServiceApi, terminalResult } from "../core/model/service-api.ts";
import { compactAnswer } from "./compact.ts";
import type { McpConfig } from "./config.ts";
import type { JobWatch } from "./job-watch.ts";
import { jobIdFromUri, MAX_SUBSCRIPTIONS_PER_SESSION } from "./job-watch.ts";
import { jobUri } from "./results.ts";

const TAIL_LINES = 40;

export async function readJobResource(service: JobServiceApi, config: McpConfig, jobId: string) {
  try {
    const status = await service.status(jobId);
    const body: Record<string, unknown> = { job: status };
    if (isTerminal(status.state)) {
      const done = await service.wait(jobId, { timeoutMs: 0, untracked: true });
      // compact, as the same result in every wait-like answer over MCP
      if (isDelivered(done)) body.result = compactAnswer(terminalResult(done));
    } else {
      const logs = await service.logs({
        job_id: jobId,
        stream: "both",
        tail_lines: TAIL_LINES,
        max_bytes: config.maxReturnBytes,
      });
      body.stdout_tail = logs.stdout ?? "";
      body.stderr_tail = logs.stderr ?? "";
      body.truncated = logs.truncated;
    }
    return body;
  } catch (error) {
    if (error instanceof AwaitlessError && error.code === "not_found") {
      throw new ProtocolError(
        ProtocolErrorCode.ResourceNotFound,
        `Resource ${jobUri(jobId)} not found: no job ${jobId}. Call list_jobs to see known jobs.`,
        { uri: jobUri(jobId) },
      );
    }
    throw invalidJobUri(jobUri(jobId), error);
  }
}

/** A malformed job ID in a URI is the caller's mistake: invalid params (-32602) with the hint, not an internal error. */
function invalidJobUri(uri: string, error: unknown): unknown {
  if (!(error instanceof AwaitlessError) || error.code !== "invalid_argument") return error;
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${error.message}. ${error.mcpHint}`, {
    uri,
    hint: error.mcpHint,
  });
}

export function registerJobResources(
  mcp: McpServer,
  service: JobServiceApi,
  config: McpConfig,
  watch: JobWatch,
  era: "legacy" | "modern",
): void {
  const template = new ResourceTemplate("awaitless://jobs/{job_id}", {
    list: async () => {
      const jobs = await service.list({ limit: 50 });
      return {
        resources: jobs.map((job) => ({
          uri: jobUri(job.job_id),
          name: job.job_id,
          title: job.name ?? job.argv.join(" ").slice(0, 80),
          description: `${job.state}: ${job.argv.join(" ").slice(0, 120)}`,
          mimeType: "application/json",
        })),
      };
    },
  });
  mcp.registerResource(
    "job",
    template,
    {
      title: "Awaitless job",
      description: "Status and bounded output tails of one job (the terminal result once it finished).",
      mimeType: "application/json",
    },
    async (uri, variables) => {
      const raw = variables.job_id;
      const jobId = Array.isArray(raw) ? raw[0] : raw;
      if (jobId === undefined || jobIdFromUri(uri.href) === undefined) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Not a job URI: ${uri.href}`);
      }
      const body = await readJobResource(service, config, jobId);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(body) }] };
    },
  );
  mcp.server.registerCapabilities({ resources: { subscribe: true, listChanged: false } });
  if (era === "modern") return; // 2026: subscriptions/listen is served by the stdio entry, see stdio.ts.
  mcp.server.setRequestHandler("resources/subscribe", async (request) => {
    const uri = request.params.uri;
    const jobId = jobIdFromUri(uri);
    if (jobId === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot subscribe to ${uri}: only awaitless://jobs/{job_id}.`,
      );
    }
    let subscribed: boolean;
    try {
      subscribed = await watch.subscribe(uri);
    } catch (error) {
      if (error instanceof AwaitlessError && error.code === "not_found") {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Cannot subscribe to ${uri}: no job ${jobId}. Call list_jobs to see known jobs.`,
        );
      }
      throw invalidJobUri(uri, error);
    }
    if (!subscribed) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Cannot subscribe to ${uri}: this session already holds ${MAX_SUBSCRIPTIONS_PER_SESSION} subscriptions, the most it keeps. ` +
          "Call resources/unsubscribe for the jobs you no longer follow, then subscribe again.",
        { uri, limit: MAX_SUBSCRIPTIONS_PER_SESSION },
      );
    }
    return {};
  });
  mcp.server.setRequestHandler("resources/unsubscribe", async (request) => {
    watch.unsubscribe(request.params.uri);
    return {};
  });
}
