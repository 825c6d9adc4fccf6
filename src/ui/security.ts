// The dashboard's gate: the token (query once, then an HttpOnly cookie; a header on every POST), Host and Origin.
import { randomBytes, timingSafeEqual } from "node:crypto";

export const COOKIE = "awaitless_ui_token";
export const TOKEN_HEADER = "x-awaitless-token";

export function newToken(): string {
  return randomBytes(24).toString("hex");
}

export interface Gate {
  token: string;
  /** The host names this server answers to (each with its port): loopback names, and --host when given. */
  hosts: string[];
  port: number;
}

/** The Host values a request may carry: name:port for each served name (IPv6 bracketed). */
export function allowedHosts(gate: Gate): Set<string> {
  const out = new Set<string>();
  for (const h of gate.hosts) {
    const name = h.includes(":") && !h.startsWith("[") ? `[${h}]` : h;
    out.add(`${name.toLowerCase()}:${gate.port}`);
  }
  return out;
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function cookieToken(req: Request): string | null {
  const header = req.headers.get("cookie") ?? "";
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === COOKIE) return v.join("=");
  }
  return null;
}

export type Verdict = { ok: true; viaQuery: boolean } | { ok: false; status: 401 | 403; why: string };

/**
 * Whether a request may be answered. Host (DNS rebinding) and Origin (other sites) first, then the token: from the
 * cookie or ?token= on a GET; a POST must carry it in the X-Awaitless-Token header too (no form of another site can).
 */
export function check(req: Request, gate: Gate): Verdict {
  const hosts = allowedHosts(gate);
  const host = (req.headers.get("host") ?? "").toLowerCase();
  if (!hosts.has(host)) return { ok: false, status: 403, why: `unexpected Host ${JSON.stringify(host)}` };
  const origin = req.headers.get("origin");
  if (origin !== null) {
    let originHost = "";
    try {
      const u = new URL(origin);
      originHost = u.protocol === "http:" ? u.host.toLowerCase() : "";
    } catch {}
    if (!hosts.has(originHost)) return { ok: false, status: 403, why: `cross-origin request from ${origin}` };
  }
  const url = new URL(req.url);
  const fromQuery = url.searchParams.get("token");
  const fromCookie = cookieToken(req);
  const fromHeader = req.headers.get(TOKEN_HEADER);
  if (req.method !== "GET" && req.method !== "HEAD") {
    if (!fromHeader) return { ok: false, status: 401, why: "a POST needs the X-Awaitless-Token header" };
    if (!sameToken(fromHeader, gate.token)) return { ok: false, status: 403, why: "wrong token" };
    return { ok: true, viaQuery: false };
  }
  const given = fromHeader ?? fromQuery ?? fromCookie;
  if (!given) return { ok: false, status: 401, why: "no token" };
  if (!sameToken(given, gate.token)) return { ok: false, status: 403, why: "wrong token" };
  return { ok: true, viaQuery: fromHeader === null && fromQuery !== null };
}

/** Headers on every answer: no caching, no framing, no sniffing, scripts and styles from this server only. */
export const SAFE_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
