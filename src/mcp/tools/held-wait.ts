// A held wait for one job (wait_for_job, blocking run_job): progress while it holds, the answer for MCP after.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { isDelivered } from "../../core/model/service-api.ts";
import { holdTimeoutMs, holdWithProgress } from "../hold.ts";
import { answerText } from "../result-text.ts";
import { answerResult, mcpWait } from "../results.ts";
import { finalToolResult } from "../task-view.ts";
import type { CallCtx, ToolEnv } from "./define.ts";

/** Holds for `jobId` up to `timeoutSeconds` (the hold budget at most); `finalShape`: answer as a task's result. */
export async function holdForJob(
  env: ToolEnv,
  jobId: string,
  timeoutSeconds: number | undefined,
  ctx: CallCtx,
  finalShape: boolean,
): Promise<CallToolResult> {
  const timeoutMs = holdTimeoutMs(timeoutSeconds, ctx.hold.budgetMs);
  const hold = () => holdWithProgress(ctx.hold, (hooks) => env.service.wait(jobId, { timeoutMs, ...hooks }));
  const resp = env.finished ? await env.finished.holding(jobId, hold) : await hold();
  env.finished?.track(jobId);
  if (isDelivered(resp)) env.finished?.delivered(jobId);
  env.watch.watch(jobId);
  if (finalShape || isDelivered(resp)) return finalToolResult(resp);
  const out = mcpWait(resp, resp.host_unreachable ? undefined : await quietSecondsOf(env, jobId));
  return answerResult(out, answerText(out), { jobId });
}

/** How long the answer may wait for the job's status (an SSH round trip) before it goes without the offer. */
const QUIET_LOOKUP_MS = 2_000;

/** Seconds since the job's last output (since its start when it has none), for the cancel_job offer. */
async function quietSecondsOf(env: ToolEnv, jobId: string): Promise<number | undefined> {
  const status = await Promise.race([
    env.service.status(jobId).catch(() => undefined),
    Bun.sleep(QUIET_LOOKUP_MS).then(() => undefined),
  ]);
  if (status === undefined) return undefined;
  if (status.last_output_at !== null) return (Date.now() - Date.parse(status.last_output_at)) / 1000;
  return status.elapsed_seconds;
}
