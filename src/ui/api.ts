// The dashboard's JSON API over JobServiceApi: listings, one job (spec without env values), logs, queues, actions.
import { AwaitlessError } from "../core/errors.ts";
import type { JobServiceApi, ListRequest, LogsRequest } from "../core/service-types.ts";

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

/** GET /api/jobs?state=&host=&queue=&name=&q=&limit=: q keeps jobs whose ID, name or command contains it. */
export async function listJobs(service: JobServiceApi, url: URL): Promise<Response> {
  const p = url.searchParams;
  const req: ListRequest = { limit: intParam(url, "limit") ?? 500 };
  const state = p.get("state");
  if (state) req.state = state as ListRequest["state"];
  for (const key of ["host", "queue", "name"] as const) {
    const v = p.get(key);
    if (v) req[key] = v;
  }
  const page = await service.listPage(req);
  const q = p.get("q")?.toLowerCase();
  const jobs = q
    ? page.jobs.filter((j) =>
        [j.job_id, j.name ?? "", j.argv.join(" ")].some((s) => s.toLowerCase().includes(q)),
      )
    : page.jobs;
  return json({ jobs, total: q ? jobs.length : page.total });
}

/** GET /api/jobs/ID: the inspect view; the spec's env shows names only (values never leave the service's copy). */
export async function jobDetail(service: JobServiceApi, jobId: string): Promise<Response> {
  const view = await service.inspect(jobId);
  const { env, ...spec } = view.spec as { env?: Record<string, string> } & Record<string, unknown>;
  return json({ ...view, spec: { ...spec, env_names: Object.keys(env ?? {}) } });
}

const STREAMS = new Set(["stdout", "stderr", "both"]);

/** GET /api/jobs/ID/logs?stream=&tail=&head=&from=&to=&grep=: the service's whole-log reads, paged. */
export async function jobLogs(service: JobServiceApi, jobId: string, url: URL): Promise<Response> {
  const p = url.searchParams;
  const req: LogsRequest = { job_id: jobId, max_bytes: 256 * 1024 };
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
