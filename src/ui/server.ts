// `awaitless ui`'s HTTP server (Bun.serve): the gate on every request, embedded pages, the API and its SSE streams.
import { hostname as machineName, networkInterfaces } from "node:os";
import type { JobServiceApi } from "../core/service-types.ts";
import {
  arrayCancel,
  arrayDetail,
  errorResponse,
  jobDetail,
  jobId,
  jobLogs,
  json,
  listJobs,
  submitAgain,
} from "./api.ts";
import appJs from "./assets/app.js.txt" with { type: "text" };
import graphJs from "./assets/graph.js.txt" with { type: "text" };
import indexBundle from "./assets/index.html" with { type: "text" };
import logJs from "./assets/log.js.txt" with { type: "text" };
import loginBundle from "./assets/login.html" with { type: "text" };
import styleCss from "./assets/style.css" with { type: "text" };
import { LiveFeed } from "./feed.ts";
import { COOKIE, check, type Gate, newToken, SAFE_HEADERS } from "./security.ts";
import { followStream, sseResponse } from "./sse.ts";

export interface UiOptions {
  /** The address to bind: 127.0.0.1 unless given. */
  hostname?: string;
  /** 0 = a free port. */
  port?: number;
  token?: string;
  /** The feed's longest wait between listings (tests shorten it). */
  rescanMs?: number;
}

export interface UiServer {
  url: string;
  /** The URL with the token (print this one). */
  loginUrl: string;
  token: string;
  port: number;
  feed: LiveFeed;
  stop(): Promise<void>;
}

// bun's types call an .html import a bundle; imported as text it is the file's text.
const indexHtml = indexBundle as unknown as string;
const loginHtml = loginBundle as unknown as string;

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1"];

/** The names a request's Host may carry besides loopback: the bound address; for 0.0.0.0 / ::, this machine's. */
function servedNames(hostname: string): string[] {
  if (LOOPBACK_NAMES.includes(hostname)) return [];
  if (hostname !== "0.0.0.0" && hostname !== "::") return [hostname];
  const addresses = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && (hostname === "::" || a.family === "IPv4"))
    .map((a) => a!.address);
  return [machineName(), ...addresses];
}

function withHeaders(res: Response): Response {
  for (const [k, v] of Object.entries(SAFE_HEADERS)) res.headers.set(k, v);
  return res;
}

function text(body: string, type: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": `${type}; charset=utf-8` } });
}

export function startUi(service: JobServiceApi, opts: UiOptions = {}): UiServer {
  const hostname = opts.hostname ?? "127.0.0.1";
  const token = opts.token ?? newToken();
  const feed = new LiveFeed(service, opts.rescanMs);
  const gate: Gate = { token, hosts: [...LOOPBACK_NAMES], port: 0 };
  gate.hosts.push(...servedNames(hostname));
  const page = indexHtml.replace("__TOKEN__", token);

  const server = Bun.serve({
    hostname,
    port: opts.port ?? 0,
    idleTimeout: 0,
    async fetch(req) {
      const verdict = check(req, gate);
      const url = new URL(req.url);
      if (!verdict.ok) {
        const wantsPage = req.method === "GET" && (url.pathname === "/" || url.pathname === "/login");
        const res =
          wantsPage && verdict.status === 401
            ? text(loginHtml, "text/html", 401)
            : json(
                {
                  error: {
                    code: verdict.status === 401 ? "unauthorized" : "forbidden",
                    message: verdict.why,
                  },
                },
                verdict.status,
              );
        return withHeaders(res);
      }
      if (verdict.viaQuery) {
        // As Jupyter: the token in the URL once, then a cookie; the address bar loses the token.
        url.searchParams.delete("token");
        const res = new Response(null, { status: 303, headers: { location: url.pathname + url.search } });
        res.headers.append("set-cookie", `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`);
        return withHeaders(res);
      }
      try {
        return withHeaders(await route(req, url));
      } catch (e) {
        return withHeaders(errorResponse(e));
      }
    },
  });
  gate.port = server.port ?? 0;

  async function route(req: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    if (req.method === "GET") {
      if (path === "/" || path === "/index.html") return text(page, "text/html");
      if (path === "/app.js") return text(appJs, "text/javascript");
      if (path === "/graph.js") return text(graphJs, "text/javascript");
      if (path === "/log.js") return text(logJs, "text/javascript");
      if (path === "/style.css") return text(styleCss, "text/css");
      if (path === "/api/jobs") return listJobs(service, url);
      if (path === "/api/queues") return json(await service.listQueues());
      if (path === "/api/events") return sseResponse(req, (send) => feed.subscribe(send));
      const a = /^\/api\/arrays\/([^/]+)$/.exec(path);
      if (a) return arrayDetail(service, decodeURIComponent(a[1]!));
      const m = /^\/api\/jobs\/([^/]+)(\/logs|\/follow)?$/.exec(path);
      if (m) {
        const id = decodeURIComponent(m[1]!);
        if (m[2] === "/logs") return jobLogs(service, id, url);
        if (m[2] === "/follow") {
          const one = jobId(service, id);
          await service.status(one); // an unknown ID answers 404 before the stream opens
          return followStream(req, service, one);
        }
        return jobDetail(service, id);
      }
    }
    if (req.method === "POST") {
      const a = /^\/api\/arrays\/([^/]+)\/cancel$/.exec(path);
      if (a) return arrayCancel(service, decodeURIComponent(a[1]!));
      const m = /^\/api\/jobs\/([^/]+)\/(cancel|submit-again)$/.exec(path);
      if (m) {
        if (m[2] === "submit-again") return submitAgain(service, decodeURIComponent(m[1]!));
        return json(await service.cancel(jobId(service, decodeURIComponent(m[1]!))));
      }
    }
    return json({ error: { code: "not_found", message: `no ${req.method} ${path}` } }, 404);
  }

  const shown = hostname.includes(":") ? `[${hostname}]` : hostname === "0.0.0.0" ? "127.0.0.1" : hostname;
  const base = `http://${shown}:${gate.port}/`;
  return {
    url: base,
    loginUrl: `${base}?token=${token}`,
    token,
    port: gate.port,
    feed,
    async stop() {
      feed.stop();
      await server.stop(true);
    },
  };
}
