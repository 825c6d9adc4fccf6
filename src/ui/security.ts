// The dashboard's gate: Host and Origin on every request, the token in the X-Awaitless-Token header on every API call.
import { randomBytes, timingSafeEqual } from "node:crypto";

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

/** Why a request is refused: `code` names it for the page (which signs out on the token's two). */
export type Refusal = {
  ok: false;
  status: 401 | 403;
  code: "no_token" | "wrong_token" | "forbidden";
  why: string;
};
export type Verdict = { ok: true } | Refusal;

/** The longest piece of a refused header quoted back (a 1 MB Host is not echoed whole). */
const QUOTED_CHARS = 100;

function quoted(value: string): string {
  const cut = value.length > QUOTED_CHARS ? `${value.slice(0, QUOTED_CHARS)}…` : value;
  return JSON.stringify(cut);
}

/**
 * Whether this server may answer at all: Host is one of its own names (DNS rebinding), and an Origin, when sent,
 * is its own (another site's script). Every path, the public page and assets included.
 */
export function checkPlace(req: Request, gate: Gate): Verdict {
  const hosts = allowedHosts(gate);
  const host = (req.headers.get("host") ?? "").toLowerCase();
  if (!hosts.has(host))
    return { ok: false, status: 403, code: "forbidden", why: `unexpected Host ${quoted(host)}` };
  const origin = req.headers.get("origin");
  if (origin !== null) {
    let originHost = "";
    try {
      const u = new URL(origin);
      originHost = u.protocol === "http:" ? u.host.toLowerCase() : "";
    } catch {}
    if (!hosts.has(originHost))
      return {
        ok: false,
        status: 403,
        code: "forbidden",
        why: `cross-origin request from ${quoted(origin)}`,
      };
  }
  return { ok: true };
}

/**
 * Whether an API request carries this server's token, in the X-Awaitless-Token header and nowhere else. Cookies
 * and query strings are never read: a cookie is sent to every port of the host (another user's server on this
 * machine gets it), and a URL ends up in history and logs. A header is set only by the page's own script, which
 * keeps the token in its tab's sessionStorage (one origin: scheme, host and port).
 */
export function checkToken(req: Request, gate: Gate): Verdict {
  const given = req.headers.get(TOKEN_HEADER);
  if (!given)
    return {
      ok: false,
      status: 401,
      code: "no_token",
      why: "no token: send it in the X-Awaitless-Token header (the page does, once opened from the URL awaitless ui printed)",
    };
  if (!sameToken(given, gate.token))
    return {
      ok: false,
      status: 403,
      code: "wrong_token",
      why: "wrong token: it is not this server's (each start of awaitless ui makes a new one)",
    };
  return { ok: true };
}

/**
 * Headers on every answer: no caching, no framing, no sniffing, scripts and styles from this server only; no other
 * origin may embed an answer (CORP) or keep a handle on a dashboard window it opened (COOP).
 */
export const SAFE_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
};
