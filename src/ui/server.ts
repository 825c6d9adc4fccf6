// `awaitless ui`'s HTTP server (Bun.serve): the gate on every request, the public page, the API and its streams.
import { hostname as machineName, networkInterfaces } from "node:os";
import type { Server } from "bun";
import { AwaitlessError } from "../core/model/errors.ts";
import type { JobServiceApi } from "../core/model/service-api.ts";
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
import { LiveFeed } from "./feed.ts";
import { asset, errorAnswer } from "./pages.ts";
import { checkPlace, checkToken, type Gate, newToken, SAFE_HEADERS } from "./security.ts";
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
  /** The URL with the token in its fragment (print this one): the page takes it, the server never sees it. */
  loginUrl: string;
  token: string;
  port: number;
  feed: LiveFeed;
  stop(): Promise<void>;
}

/**
 * Seconds a connection may stay idle (no request coming in) before the server closes it. Bun's own limit for a
 * request still arriving is about 10 s too. The live streams are exempt and send their own heartbeat.
 */
export const IDLE_TIMEOUT_S = 10;

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

/**
 * Our headers on every answer. Only an API answer to a request with the token keeps its connection open: every
 * other one (the public page, refusals, errors) closes it, so sockets of someone without the token do not pile up.
 */
function finish(res: Response, keepAlive: boolean): Response {
  for (const [k, v] of Object.entries(SAFE_HEADERS)) res.headers.set(k, v);
  if (!keepAlive) res.headers.set("connection", "close");
  return res;
}

function parseUrl(req: Request): URL | null {
  try {
    return new URL(req.url);
  } catch {
    return null; // a malformed Host makes the request's URL unparsable
  }
}

/** A path segment decoded; a malformed escape is the caller's mistake (400), not ours. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new AwaitlessError(
      "invalid_argument",
      `bad escape in ${JSON.stringify(segment.slice(0, 100))}`,
      "encode the ID with encodeURIComponent",
    );
  }
}

const diagnose = (line: string) => {
  process.stderr.write(`awaitless ui: ${line}\n`);
};

export function startUi(service: JobServiceApi, opts: UiOptions = {}): UiServer {
  const hostname = opts.hostname ?? "127.0.0.1";
  const token = opts.token ?? newToken();
  const feed = new LiveFeed(service, opts.rescanMs);
  const gate: Gate = { token, hosts: [...LOOPBACK_NAMES], port: 0 };
  gate.hosts.push(...servedNames(hostname));

  async function answer(req: Request, server: Server<unknown>): Promise<Response> {
    const url = parseUrl(req);
    if (url === null) return finish(errorAnswer(false, 400, "bad_request", "malformed Host header"), false);
    const api = url.pathname.startsWith("/api/");
    const place = checkPlace(req, gate);
    if (!place.ok) return finish(errorAnswer(api, place.status, place.code, place.why), false);
    if (!api) {
      const page = req.method === "GET" || req.method === "HEAD" ? asset(url.pathname) : undefined;
      return finish(page ?? errorAnswer(false, 404, "not_found", `no ${req.method} ${url.pathname}`), false);
    }
    const tokenOk = checkToken(req, gate);
    if (!tokenOk.ok) return finish(errorAnswer(true, tokenOk.status, tokenOk.code, tokenOk.why), false);
    // Bun counts a request still being answered as idle: one that takes long (a listing waiting on an SSH host)
    // is freed from the idle limit, and its connection closed after the answer, so no connection stays unbounded.
    let slow = false;
    const guard = setTimeout(
      () => {
        slow = true;
        server.timeout(req, 0);
      },
      (IDLE_TIMEOUT_S - 2) * 1000,
    );
    try {
      return finish(await route(req, url, server), !slow);
    } catch (e) {
      return finish(errorResponse(e), !slow);
    } finally {
      clearTimeout(guard);
    }
  }

  const server = Bun.serve({
    hostname,
    port: opts.port ?? 0,
    idleTimeout: IDLE_TIMEOUT_S,
    // never Bun's development error page (source lines, the working directory)
    development: false,
    async fetch(req, srv) {
      try {
        return await answer(req, srv);
      } catch (e) {
        diagnose(`answering a request failed: ${String((e as Error)?.message ?? e)}`);
        return finish(errorAnswer(false, 500, "internal", "the request could not be answered"), false);
      }
    },
    error(e) {
      diagnose(`answering a request failed: ${String(e?.message ?? e)}`);
      return finish(errorAnswer(false, 500, "internal", "the request could not be answered"), false);
    },
  });
  gate.port = server.port ?? 0;

  /** A live stream: exempt from the idle timeout (Bun counts no write as activity); its heartbeat keeps it open. */
  function stream(req: Request, srv: Server<unknown>, res: Response): Response {
    srv.timeout(req, 0);
    return res;
  }

  async function route(req: Request, url: URL, srv: Server<unknown>): Promise<Response> {
    const path = url.pathname;
    if (req.method === "GET") {
      if (path === "/api/jobs") return listJobs(service, url);
      if (path === "/api/queues") return json(await service.listQueues());
      if (path === "/api/events")
        return stream(
          req,
          srv,
          sseResponse(req, (send) => feed.subscribe(send)),
        );
      const a = /^\/api\/arrays\/([^/]+)$/.exec(path);
      if (a) return arrayDetail(service, decoded(a[1]!));
      const m = /^\/api\/jobs\/([^/]+)(\/logs|\/follow)?$/.exec(path);
      if (m) {
        const id = decoded(m[1]!);
        if (m[2] === "/logs") return jobLogs(service, id, url);
        if (m[2] === "/follow") {
          const one = jobId(service, id);
          await service.status(one); // an unknown ID answers 404 before the stream opens
          return stream(req, srv, followStream(req, service, one));
        }
        return jobDetail(service, id);
      }
    }
    if (req.method === "POST") {
      const a = /^\/api\/arrays\/([^/]+)\/cancel$/.exec(path);
      if (a) return arrayCancel(service, decoded(a[1]!));
      const m = /^\/api\/jobs\/([^/]+)\/(cancel|submit-again)$/.exec(path);
      if (m) {
        if (m[2] === "submit-again") return submitAgain(service, decoded(m[1]!));
        return json(await service.cancel(jobId(service, decoded(m[1]!))));
      }
    }
    return json({ error: { code: "not_found", message: `no ${req.method} ${path}` } }, 404);
  }

  const shown = hostname.includes(":") ? `[${hostname}]` : hostname === "0.0.0.0" ? "127.0.0.1" : hostname;
  const base = `http://${shown}:${gate.port}/`;
  return {
    url: base,
    loginUrl: `${base}#token=${token}`,
    token,
    port: gate.port,
    feed,
    async stop() {
      feed.stop();
      await server.stop(true);
    },
  };
}
