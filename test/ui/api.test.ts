// The dashboard's server in process over the real job service: the token, Host and Origin gates, the API, the SSE feed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { JobStatus } from "../../src/core/model/service-api.ts";
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
  test("every API request and stream without it is refused with 401", async () => {
    for (const path of [
      "/api/jobs",
      "/api/events",
      "/api/queues",
      "/api/arrays/job_01XXXXXXXXXXXXXXXXXXXXXXXX",
    ]) {
      const r = await raw(ui.port, "GET", path);
      expect({ path, status: r.status }).toEqual({ path, status: 401 });
      expect(JSON.parse(r.body).error.code).toBe("no_token");
      expect(r.body).not.toContain(ui.token);
    }
  });

  test("the page and its assets need no token and hold none: no data, no credential, no cookie", async () => {
    for (const path of [
      "/",
      "/session.js",
      "/fields.js",
      "/app.js",
      "/graph.js",
      "/log.js",
      "/style.css",
      "/favicon.svg",
    ]) {
      const r = await raw(ui.port, "GET", path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expect(r.body).not.toContain(ui.token);
      expect(r.headers["set-cookie"]).toBeUndefined();
      expect(r.headers["content-security-policy"]).toContain("script-src 'self'");
    }
  });

  test("only the X-Awaitless-Token header counts: a wrong one is 403; in the query or a cookie it is not read (401)", async () => {
    const wrong = "0".repeat(ui.token.length);
    const r = await raw(ui.port, "GET", "/api/jobs", { "x-awaitless-token": wrong });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.code).toBe("wrong_token");
    // the right token where another server could have picked it up (a cookie goes to every port of the host)
    expect((await raw(ui.port, "GET", `/api/jobs?token=${ui.token}`)).status).toBe(401);
    expect(
      (await raw(ui.port, "GET", "/api/jobs", { cookie: `awaitless_ui_token=${ui.token}` })).status,
    ).toBe(401);
    expect(
      (await raw(ui.port, "GET", "/api/events", { cookie: `awaitless_ui_token=${ui.token}` })).status,
    ).toBe(401);
    expect((await raw(ui.port, "GET", "/api/jobs", auth())).status).toBe(200);
  });

  test("the URL to print carries the token in its fragment, which a browser never sends", () => {
    expect(ui.loginUrl).toBe(`${ui.url}#token=${ui.token}`);
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

test("an answer that takes longer than the idle limit still comes, on a connection closed after it", async () => {
  const { IDLE_TIMEOUT_S } = await import("../../src/ui/server.ts");
  // the service's queue listing made slow, as a listing waiting on an unreachable SSH host is
  const slowService = new Proxy(real.service, {
    get(target, key) {
      if (key === "listQueues")
        return async () => {
          await Bun.sleep((IDLE_TIMEOUT_S + 3) * 1000);
          return target.listQueues();
        };
      const v = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const slow = startUi(slowService);
  try {
    const r = await raw(slow.port, "GET", "/api/queues", {
      "x-awaitless-token": slow.token,
      connection: "keep-alive",
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).queues).toEqual([]);
    expect(r.headers.connection).toBe("close");
  } finally {
    await slow.stop();
  }
}, 60_000);

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
