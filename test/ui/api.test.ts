// The dashboard's server in process over the real job service: the token, Host and Origin gates, the API, the SSE feed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { JobStatus } from "../../src/core/service-types.ts";
import { startUi, type UiServer } from "../../src/ui/server.ts";
import { type RealService, realService } from "../mcp/real-service.ts";
import { raw, readEvents } from "./http.ts";

let real: RealService;
let ui: UiServer;
const auth = () => ({ "x-awaitless-token": ui.token });

beforeAll(() => {
  real = realService();
  ui = startUi(real.service, { rescanMs: 200 });
});
afterAll(async () => {
  await ui.stop();
  await real.dispose();
});

describe("the token", () => {
  test("every request without it is refused with 401: API, SSE, assets; the page is a login page", async () => {
    for (const path of [
      "/api/jobs",
      "/api/events",
      "/app.js",
      "/graph.js",
      "/style.css",
      "/api/queues",
      "/api/arrays/job_01XXXXXXXXXXXXXXXXXXXXXXXX",
    ]) {
      const r = await raw(ui.port, "GET", path);
      expect({ path, status: r.status }).toEqual({ path, status: 401 });
      expect(r.body).not.toContain(ui.token);
    }
    const page = await raw(ui.port, "GET", "/");
    expect(page.status).toBe(401);
    expect(page.body).toContain("needs its token");
    expect(page.body).not.toContain(ui.token);
  });

  test("a wrong token is refused with 403, in the query, the header or the cookie", async () => {
    const wrong = "0".repeat(ui.token.length);
    expect((await raw(ui.port, "GET", `/api/jobs?token=${wrong}`)).status).toBe(403);
    expect((await raw(ui.port, "GET", "/api/jobs", { "x-awaitless-token": wrong })).status).toBe(403);
    expect((await raw(ui.port, "GET", "/api/jobs", { cookie: `awaitless_ui_token=${wrong}` })).status).toBe(
      403,
    );
  });

  test("?token= once sets an HttpOnly SameSite cookie and drops the token from the address", async () => {
    const r = await raw(ui.port, "GET", `/?token=${ui.token}`);
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe("/");
    expect(r.headers["set-cookie"]).toContain("HttpOnly");
    expect(r.headers["set-cookie"]).toContain("SameSite=Strict");
    const page = await raw(ui.port, "GET", "/", { cookie: `awaitless_ui_token=${ui.token}` });
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
  });

  test("a POST needs the token header: the cookie alone (what a cross-site form carries) is refused", async () => {
    const sub = await real.service.submit({ argv: ["true"] });
    const r = await raw(ui.port, "POST", `/api/jobs/${sub.job_id}/cancel`, {
      cookie: `awaitless_ui_token=${ui.token}`,
    });
    expect(r.status).toBe(401);
  });
});

describe("Host and Origin", () => {
  test("a rebinding name in Host is refused even with the token", async () => {
    const r = await raw(ui.port, "GET", "/api/jobs", { ...auth(), host: `evil.example:${ui.port}` });
    expect(r.status).toBe(403);
    expect(r.body).toContain("unexpected Host");
    expect((await raw(ui.port, "GET", "/api/jobs", { ...auth(), host: `localhost:${ui.port}` })).status).toBe(
      200,
    );
    expect((await raw(ui.port, "GET", "/api/jobs", { ...auth(), host: "127.0.0.1:1" })).status).toBe(403);
  });

  test("another site's Origin is refused; no CORS header is ever sent", async () => {
    const r = await raw(ui.port, "GET", "/api/jobs", { ...auth(), origin: "http://evil.example" });
    expect(r.status).toBe(403);
    const ok = await raw(ui.port, "GET", "/api/jobs", { ...auth(), origin: `http://127.0.0.1:${ui.port}` });
    expect(ok.status).toBe(200);
    expect(ok.headers["access-control-allow-origin"]).toBeUndefined();
    const pre = await raw(ui.port, "OPTIONS", "/api/jobs", {
      origin: "http://evil.example",
      "access-control-request-method": "POST",
    });
    expect(pre.status).toBe(403);
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
  });
});

test("bound to 0.0.0.0, this machine's own names pass the Host check; others still do not", async () => {
  const { hostname } = await import("node:os");
  const wide = startUi(real.service, { hostname: "0.0.0.0" });
  try {
    const h = { "x-awaitless-token": wide.token };
    expect(
      (await raw(wide.port, "GET", "/api/jobs", { ...h, host: `${hostname()}:${wide.port}` })).status,
    ).toBe(200);
    expect(
      (await raw(wide.port, "GET", "/api/jobs", { ...h, host: `evil.example:${wide.port}` })).status,
    ).toBe(403);
  } finally {
    await wide.stop();
  }
});

describe("the API", () => {
  test("one job: the spec names env variables but never shows their values", async () => {
    const sub = await real.service.submit({
      argv: ["sh", "-c", "echo token=$TOKEN_X"],
      env: { PLAIN_VALUE: "visible-in-spec-never" },
      secret_env: ["TOKEN_X"],
      secret_values: { TOKEN_X: "s3cr3t-value-42" },
    });
    await real.service.wait(sub.job_id, { timeoutMs: 15_000 });
    const r = await raw(ui.port, "GET", `/api/jobs/${sub.job_id}`, auth());
    expect(r.status).toBe(200);
    const d = JSON.parse(r.body);
    expect(d.spec.env_names).toEqual(["PLAIN_VALUE"]);
    expect(r.body).not.toContain("visible-in-spec-never");
    expect(r.body).not.toContain("s3cr3t-value-42");
    const logs = await raw(ui.port, "GET", `/api/jobs/${sub.job_id}/logs?grep=token`, auth());
    expect(logs.status).toBe(200);
    expect(JSON.parse(logs.body).stdout).toContain("token=");
    expect(logs.body).not.toContain("s3cr3t-value-42");
  });

  test("filters and search; bad input is a 400 that says what to do; unknown jobs 404", async () => {
    const sub = await real.service.submit({ argv: ["echo", "findme-7781"], name: "searchable" });
    await real.service.wait(sub.job_id, { timeoutMs: 15_000 });
    const q = JSON.parse((await raw(ui.port, "GET", "/api/jobs?q=findme-7781", auth())).body);
    expect(q.jobs.map((j: JobStatus) => j.job_id)).toEqual([sub.job_id]);
    const byName = JSON.parse((await raw(ui.port, "GET", "/api/jobs?name=searchable", auth())).body);
    expect(byName.jobs.map((j: JobStatus) => j.job_id)).toEqual([sub.job_id]);
    const bad = await raw(ui.port, "GET", "/api/jobs?state=nonsense", auth());
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.hint).toContain("use one of");
    expect((await raw(ui.port, "GET", "/api/jobs/job_01XXXXXXXXXXXXXXXXXXXXXXXX", auth())).status).toBe(404);
  });

  test("cancel and submit again, each a POST with the token", async () => {
    const gate = real.gate();
    const sub = await real.service.submit({ argv: gate.command, name: "to-cancel" });
    const c = await raw(ui.port, "POST", `/api/jobs/${sub.job_id}/cancel`, {
      ...auth(),
      origin: `http://127.0.0.1:${ui.port}`,
    });
    expect(c.status).toBe(200);
    expect((await real.service.wait(sub.job_id, { timeoutMs: 20_000 })).job_state).toBe("cancelled");
    const again = await raw(ui.port, "POST", `/api/jobs/${sub.job_id}/submit-again`, auth());
    expect(again.status).toBe(200);
    const second = JSON.parse(again.body);
    expect(second.job_id).not.toBe(sub.job_id);
    const spec2 = (await real.service.inspect(second.job_id)).spec;
    expect(spec2.argv).toEqual(gate.command);
    expect(spec2.name).toBe("to-cancel");
    gate.end(0);
    expect((await real.service.wait(second.job_id, { timeoutMs: 20_000 })).job_state).toBe("succeeded");
  });
});

describe("arrays and attempts", () => {
  test("an array: its page's read, tasks marked in the listing, task addresses, its ID refused where one job is meant", async () => {
    const arrays = real.service.arrays!;
    const a = await arrays.submit(
      { argv: ["sh", "-c", 'exit "$AWAITLESS_ARRAY_INDEX"'], name: "arr-api" },
      "0-2",
    );
    await arrays.wait(a.job_id, { timeoutMs: 30_000 });
    const d = await raw(ui.port, "GET", `/api/arrays/${a.job_id}`, auth());
    expect(d.status).toBe(200);
    const v = JSON.parse(d.body);
    expect([v.tasks, v.state, v.counts, v.failed_indices]).toEqual([
      3,
      "failed",
      { succeeded: 1, failed: 2 },
      [1, 2],
    ]);
    expect(v.task_list.map((t: { index: number; exit_code: number }) => [t.index, t.exit_code])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
    const listed = JSON.parse((await raw(ui.port, "GET", "/api/jobs?name=arr-api", auth())).body).jobs;
    expect(listed.map((j: { array_task?: string }) => j.array_task).sort()).toEqual(
      [0, 1, 2].map((i) => `${a.job_id}.${i}`),
    );
    const found = JSON.parse((await raw(ui.port, "GET", `/api/jobs?q=${a.job_id}.1`, auth())).body).jobs;
    expect(found.map((j: JobStatus) => j.job_id)).toEqual([v.task_list[1].job_id]);
    // the array's own ID as a job: says it is an array; ARRAY.INDEX is that task's job
    expect(JSON.parse((await raw(ui.port, "GET", `/api/jobs/${a.job_id}`, auth())).body)).toEqual({
      kind: "array",
      array_id: a.job_id,
    });
    const task = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${a.job_id}.2`, auth())).body);
    expect([task.kind, task.job.job_id, task.job.array_task, task.job.exit_code]).toEqual([
      "job",
      v.task_list[2].job_id,
      `${a.job_id}.2`,
      2,
    ]);
    const logs = await raw(ui.port, "GET", `/api/jobs/${a.job_id}/logs`, auth());
    expect(logs.status).toBe(400);
    expect(JSON.parse(logs.body).error.hint).toContain(`${a.job_id}.INDEX`);
    expect((await raw(ui.port, "GET", `/api/arrays/${v.task_list[0].job_id}`, auth())).status).toBe(404);
    expect((await raw(ui.port, "GET", `/api/jobs/${a.job_id}.9`, auth())).status).toBe(404);
  });

  test("cancel of an array is a POST with the token header; it cancels every task not ended", async () => {
    const arrays = real.service.arrays!;
    const gate = real.gate();
    const a = await arrays.submit({ argv: gate.command }, "0-3%2");
    const cookieOnly = await raw(ui.port, "POST", `/api/arrays/${a.job_id}/cancel`, {
      cookie: `awaitless_ui_token=${ui.token}`,
    });
    expect(cookieOnly.status).toBe(401);
    expect((await arrays.status(a.job_id)).counts.cancelled).toBeUndefined();
    const c = await raw(ui.port, "POST", `/api/arrays/${a.job_id}/cancel`, auth());
    expect(c.status).toBe(200);
    const r = JSON.parse(c.body);
    expect([r.cancel_requested, r.already_terminal]).toEqual([4, 0]);
    const w = await arrays.wait(a.job_id, { timeoutMs: 30_000 });
    expect([w.state, w.cancelled_indices]).toEqual(["cancelled", [0, 1, 2, 3]]);
    gate.end(0);
  });

  test("a retried job's detail carries its attempts, each with its own result; the feed sends each new attempt", async () => {
    const counter = join(real.root, "attempt-counter");
    const sub = await real.service.submit({
      argv: [
        "sh",
        "-c",
        'n=$(cat "$1" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$1"; echo "run $n"; [ $n -ge 2 ]',
        "r",
        counter,
      ],
      retries: 1,
      retry_on: ["exit"],
      retry_backoff_seconds: 0.1,
    });
    const attempts: number[] = [];
    await readEvents(`${ui.url}api/events`, auth(), (event, data) => {
      const j =
        event === "snapshot"
          ? (data as { jobs: JobStatus[] }).jobs.find((x) => x.job_id === sub.job_id)
          : (data as JobStatus);
      if (j?.job_id === sub.job_id && j.attempt !== undefined && attempts.at(-1) !== j.attempt)
        attempts.push(j.attempt);
      return j?.job_id === sub.job_id && j.state === "succeeded";
    });
    expect(attempts.at(-1)).toBe(2);
    const d = JSON.parse((await raw(ui.port, "GET", `/api/jobs/${sub.job_id}`, auth())).body);
    expect([d.job.attempt, d.job.attempts]).toEqual([2, 2]);
    expect(
      d.attempt_history.map((a: { attempt: number; state: string; exit_code: number }) => [
        a.attempt,
        a.state,
        a.exit_code,
      ]),
    ).toEqual([[1, "failed", 1]]);
    expect(d.attempt_history[0].result.stdout_tail).toBe("run 1\n");
  });
});

describe("the SSE feed", () => {
  test("sends the listing, then the job's end as it happens", async () => {
    const gate = real.gate();
    const sub = await real.service.submit({ argv: gate.command });
    let released = false;
    const events = await readEvents(`${ui.url}api/events`, auth(), (event, data) => {
      if (event === "snapshot" && !released) {
        released = true;
        gate.end(3);
      }
      return (
        event === "job" && (data as JobStatus).job_id === sub.job_id && (data as JobStatus).state === "failed"
      );
    });
    expect(events[0]!.event).toBe("snapshot");
    const snap = events[0]!.data as { jobs: JobStatus[] };
    expect(snap.jobs.find((j) => j.job_id === sub.job_id)?.state).not.toBe("failed");
    const end = events.at(-1)!.data as JobStatus;
    expect(end.exit_code).toBe(3);
  });

  test("refuses a stream without the token, and the feed stops when no page listens", async () => {
    expect((await raw(ui.port, "GET", "/api/events")).status).toBe(401);
    const { until } = await import("../helpers/until.ts");
    await until("the feed to have no page", () => ui.feed.pages === 0);
  });

  test("a job's log follow streams its text, then its end", async () => {
    const gate = real.gate();
    const sub = await real.service.submit({ argv: gate.command });
    // The follow gives each stream from its start: the text written while it opens is in it too.
    const writing = gate.write(sub.job_id, "line-one\n").then(() => gate.end(0));
    const events = await readEvents(`${ui.url}api/jobs/${sub.job_id}/follow`, auth(), (e) => e === "ended");
    await writing;
    const text = events
      .filter((e) => e.event === "text")
      .map((e) => (e.data as { text: string }).text)
      .join("");
    expect(text).toContain("line-one");
  });
});
