// The dashboard's JSON API over JobServiceApi: listings, one job (spec without env values), arrays, logs, actions.

import { AwaitlessError } from "../core/model/errors.ts";
import { listing } from "../core/model/listing.ts";
import type { JobServiceApi, JobStatus, ListRequest, LogsRequest } from "../core/model/service-api.ts";

export function json(data: unknown, status = 200): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

export function errorResponse(e: unknown): Response {
  if (e instanceof AwaitlessError) {
    const status = e.code === "not_found" ? 404 : e.code === "invalid_argument" ? 400 : 500;
    return json({ error: e.toJSON() }, status);
  }
  return json({ error: { code: "internal", message: String((e as Error)?.message ?? e) } }, 500);
}

function intParam(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n))
    throw new AwaitlessError("invalid_argument", `bad ${name} ${JSON.stringify(v)}`, "use a whole number");
  return n;
}

export { type Listing, listing } from "../core/model/listing.ts";

/** How many jobs and arrays a page lists and the feed follows. */
export const DEFAULT_LIMIT = 500;

/** GET /api/jobs?state=&host=&queue=&name=&q=&limit=: `listing`'s window (jobs, arrays, total). */
export async function listJobs(service: JobServiceApi, url: URL): Promise<Response> {
  const p = url.searchParams;
  const req: ListRequest & { limit: number } = { limit: intParam(url, "limit") ?? DEFAULT_LIMIT };
  const state = p.get("state");
  if (state) req.state = state as ListRequest["state"];
  for (const key of ["host", "queue", "name"] as const) {
    const v = p.get(key);
    if (v) req[key] = v;
  }
  return json(await listing(service, req, p.get("q")?.toLowerCase()));
}

/** Array tasks carry `array_task` (ARRAY_ID.INDEX): the pages fold them into their array's row. */
export function annotate(service: JobServiceApi, jobs: JobStatus[]): (JobStatus & { array_task?: string })[] {
  return service.arrays ? service.arrays.annotate(jobs) : jobs;
}

/** A job ID, a unique prefix, or a task address ARRAY_ID.INDEX → what it names (an array or a job). */
export function resolveId(service: JobServiceApi, text: string): { kind: "array" | "job"; id: string } {
  return service.arrays ? service.arrays.resolve(text) : { kind: "job", id: text };
}

/** An ID that must name one job (logs, follow, cancel, submit again): an array's ID is refused, saying where to go. */
export function jobId(service: JobServiceApi, text: string): string {
  const r = resolveId(service, text);
  if (r.kind === "array")
    throw new AwaitlessError(
      "invalid_argument",
      `${r.id} is a job array, not one job`,
      `use /api/arrays/${r.id}, or one task as ${r.id}.INDEX`,
    );
  return r.id;
}

/**
 * GET /api/jobs/ID: the inspect view (with `attempt_history` for a retried job); the spec's env shows names only
 * (values never leave the service's copy). An array's ID answers `{kind: "array", array_id}` (its page is
 * /api/arrays/ID); a task address ARRAY_ID.INDEX is that task's job.
 */
export async function jobDetail(service: JobServiceApi, text: string): Promise<Response> {
  const target = resolveId(service, text);
  if (target.kind === "array") return json({ kind: "array", array_id: target.id });
  const view = await service.inspect(target.id);
  const { env, ...spec } = view.spec as { env?: Record<string, string> } & Record<string, unknown>;
  const job = annotate(service, [view.job])[0]!;
  const from = job.array_task === undefined ? arrayTaskEnv(env) : undefined;
  return json({
    kind: "job",
    ...view,
    job,
    spec: { ...spec, env_names: Object.keys(env ?? {}) },
    ...(from ? { from_array_task: from } : {}),
  });
}

/** ARRAY_ID.INDEX when a job's env has an array task's variables (a task submitted again as a standalone job). */
function arrayTaskEnv(env: Record<string, string> | undefined): string | undefined {
  const id = env?.AWAITLESS_ARRAY_ID;
  const index = env?.AWAITLESS_ARRAY_INDEX;
  return id && index ? `${id}.${index}` : undefined;
}

/**
 * POST /api/jobs/ID/submit-again: a new job with the same spec. An array task's is a standalone job (not a task of
 * the array, outside its queue) that keeps the task's AWAITLESS_ARRAY_ID/INDEX, so the command reads the same input;
 * the answer's `from_array_task` says which task it came from.
 */
export async function submitAgain(service: JobServiceApi, text: string): Promise<Response> {
  const id = jobId(service, text);
  const task = service.arrays?.annotate([await service.status(id)])[0]?.array_task;
  const r = await service.submitAgain(id);
  return json({ ...r, ...(task ? { from_array_task: task } : {}) });
}

function arraysOf(service: JobServiceApi) {
  if (!service.arrays)
    throw new AwaitlessError("not_found", "this service has no job arrays", "open the jobs page");
  return service.arrays;
}

/** GET /api/arrays/ID: the array's counts by state, failed/cancelled indices and every task (index, job, state, exit). */
export async function arrayDetail(service: JobServiceApi, text: string): Promise<Response> {
  const arrays = arraysOf(service);
  const target = arrays.resolve(text);
  if (target.kind !== "array")
    throw new AwaitlessError("not_found", `no array ${text}`, `open the job's page: #/job/${target.id}`);
  return json(await arrays.status(target.id));
}

/** POST /api/arrays/ID/cancel: cancels every task not ended (as `awaitless cancel ARRAY_ID`). */
export async function arrayCancel(service: JobServiceApi, text: string): Promise<Response> {
  const arrays = arraysOf(service);
  const target = arrays.resolve(text);
  if (target.kind !== "array")
    throw new AwaitlessError("not_found", `no array ${text}`, "cancel one job with /api/jobs/ID/cancel");
  return json(await arrays.cancel(target.id));
}

const STREAMS = new Set(["stdout", "stderr", "both"]);

/** GET /api/jobs/ID/logs?stream=&tail=&head=&from=&to=&grep=: the service's whole-log reads, paged. */
export async function jobLogs(service: JobServiceApi, text: string, url: URL): Promise<Response> {
  const p = url.searchParams;
  const req: LogsRequest = { job_id: jobId(service, text), max_bytes: 256 * 1024 };
  const stream = p.get("stream");
  if (stream) {
    if (!STREAMS.has(stream))
      throw new AwaitlessError(
        "invalid_argument",
        `bad stream ${JSON.stringify(stream)}`,
        "use stdout, stderr or both",
      );
    req.stream = stream as LogsRequest["stream"];
  }
  const tail = intParam(url, "tail");
  const head = intParam(url, "head");
  const from = intParam(url, "from");
  const to = intParam(url, "to");
  if (tail !== undefined) req.tail_lines = tail;
  if (head !== undefined) req.head = head;
  if (from !== undefined) req.from_line = from;
  if (to !== undefined) req.to_line = to;
  const grep = p.get("grep");
  if (grep) req.grep = grep;
  if (tail === undefined && head === undefined && from === undefined && to === undefined)
    req.tail_lines = 200;
  return json(await service.logs(req));
}
