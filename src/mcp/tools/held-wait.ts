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
  let quietSeconds: number | undefined;
  const onQuietSeconds = (seconds: number | undefined) => {
    quietSeconds = seconds;
  };
  const hold = () =>
    holdWithProgress(ctx.hold, (hooks) => env.service.wait(jobId, { timeoutMs, ...hooks, onQuietSeconds }));
  const resp = env.finished ? await env.finished.holding(jobId, hold) : await hold();
  env.finished?.track(jobId);
  if (isDelivered(resp)) env.finished?.delivered(jobId);
  env.watch.watch(jobId);
  if (finalShape || isDelivered(resp)) return finalToolResult(resp);
  // the silence the wait's own last look saw decides the cancel_job offer (no second look at the job)
  const out = mcpWait(resp, resp.host_unreachable ? undefined : quietSeconds);
  return answerResult(out, answerText(out), { jobId });
}
