// Job arrays in tool answers: a task address resolved, the array in one sentence, an array launched or held for.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ArrayView } from "../../core/model/array-views.ts";
import type { LaunchRequest } from "../../core/model/service-api.ts";
import { holdWithTicker } from "../hold.ts";
import { answerResult, toolResult } from "../results.ts";
import type { CallCtx, ToolEnv } from "./define.ts";

/** A task address `ARRAY_ID.INDEX` → its job ID; any other ID as given. */
export function taskJob(env: ToolEnv, jobId: string): string {
  return env.service.arrays && /\.\d+$/.test(jobId) ? env.service.arrays.resolve(jobId).id : jobId;
}

export function arraySentence(a: ArrayView): string {
  const counts = Object.entries(a.counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
  const failed = a.failed_indices.length ? `; failed indices ${a.failed_indices.join(",")}` : "";
  return `Array ${a.job_id} (${a.array}) ${a.state}: ${a.tasks} tasks: ${counts || "none launched"}${failed}`;
}

/** submit_job/run/run_job with `array`: every task launched, then (run, run_job) a hold for them all. */
export async function launchArray(
  env: ToolEnv,
  req: LaunchRequest,
  array: string,
  holdMs: number | null,
  ctx?: CallCtx,
): Promise<CallToolResult> {
  const arrays = env.service.arrays;
  if (!arrays) throw new Error("this server's job service has no job arrays");
  const r = await arrays.submit(req, array);
  if (holdMs === null || !ctx) {
    const next_action = `Call wait_for_job with {"job_id":"${r.job_id}"} for every task's end; one task is "${r.job_id}.INDEX".`;
    return toolResult({ ...r, next_action }, `Submitted array. ${arraySentence(r)}.\n${next_action}`);
  }
  return waitArray(env, r.job_id, holdMs, ctx);
}

export async function waitArray(
  env: ToolEnv,
  arrayId: string,
  timeoutMs: number,
  ctx: CallCtx,
): Promise<CallToolResult> {
  const arrays = env.service.arrays!;
  const w = await holdWithTicker(
    ctx.hold,
    async () => arraySentence(await arrays.status(arrayId)),
    (hooks) => arrays.wait(arrayId, { timeoutMs, ...hooks }),
  );
  if (w.wait_state === "complete")
    return answerResult(w, `${arraySentence(w)}.`, { isError: w.state !== "succeeded" });
  const next_action = `Only this wait ended; no task was killed. Call wait_for_job with {"job_id":"${arrayId}"} again.`;
  return answerResult({ ...w, next_action }, `${arraySentence(w)}.\n${next_action}`);
}
