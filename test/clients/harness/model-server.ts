// The scripted model: one HTTP server (on a Unix socket, reached from inside the client's network namespace
// through forward.ts) speaking each vendor's API, answering by the scenario's steps and recording every request.

import { type Route, type Step, stepFor } from "./script.ts";
import type { Reply, ToolResultSeen, Turn, VendorApi } from "./types.ts";
import { anthropic } from "./vendors/anthropic.ts";
import { gemini } from "./vendors/gemini.ts";
import { chat } from "./vendors/openai-chat.ts";
import { responses } from "./vendors/openai-responses.ts";

export interface Recorded {
  seq: number;
  at: number;
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  turn: Turn | undefined;
  reply: Reply | undefined;
  error?: string;
}

export interface ModelServer {
  socket: string;
  records: Recorded[];
  /** Requests that offered tools (the agent's loop), in order. */
  main(): Recorded[];
  /** Every tool result the model received, each as it first appeared (by call ID). */
  results(): ToolResultSeen[];
  /** Resolves with the first request (from `from` on) that satisfies `pred`. */
  waitFor(what: string, pred: (r: Recorded) => boolean, timeoutMs: number, from?: number): Promise<Recorded>;
  stop(): void;
}

export interface ModelOptions {
  steps: Step[];
  /** How this client's model calls our tools (default: by the name the client declared). */
  route?: Route;
  /** The reply to a request that offers no tools (titles, next-speaker checks, routers). */
  side?: (turn: Turn, body: Record<string, unknown>) => Reply;
}

function vendorFor(method: string, path: string): VendorApi | undefined {
  if (method !== "POST") return undefined;
  if (/\/messages(\?|$)/.test(path)) return anthropic;
  if (/\/responses(\?|$)/.test(path)) return responses;
  if (/\/chat\/completions(\?|$)/.test(path)) return chat;
  if (/:(streamG|g)enerateContent$/.test(path)) return gemini;
  return undefined;
}

export function startModelServer(socket: string, opts: ModelOptions): ModelServer {
  const records: Recorded[] = [];
  const listeners = new Set<() => void>();
  let seq = 0;
  const server = Bun.serve({
    unix: socket,
    async fetch(req) {
      const url = new URL(req.url);
      const path = url.pathname + url.search;
      const raw = req.method === "POST" ? await req.text() : "";
      const rec: Recorded = {
        seq: ++seq,
        at: Date.now(),
        method: req.method,
        path,
        body: undefined,
        turn: undefined,
        reply: undefined,
      };
      records.push(rec);
      try {
        if (raw !== "") rec.body = JSON.parse(raw);
        const api = vendorFor(req.method, url.pathname);
        if (api === undefined || rec.body === undefined) return answerOther(req.method, url.pathname);
        const turn = api.parse(rec.body, path);
        rec.turn = turn;
        rec.reply = turn.main
          ? stepFor(opts.steps, turn, opts.route)
          : (opts.side?.(turn, rec.body) ?? { kind: "text", text: "ok" });
        return api.render(rec.reply, turn, rec.seq);
      } catch (e) {
        rec.error = (e as Error).message;
        return Response.json(
          { error: { type: "invalid_request_error", message: `scripted model: ${rec.error}` } },
          { status: 400 },
        );
      } finally {
        for (const l of listeners) l();
      }
    },
  });
  const main = () => records.filter((r) => r.turn?.main);
  return {
    socket,
    records,
    main,
    results() {
      const seen = new Map<string, ToolResultSeen>();
      for (const r of main())
        for (const res of r.turn!.results) if (!seen.has(res.callId)) seen.set(res.callId, res);
      return [...seen.values()];
    },
    waitFor(what, pred, timeoutMs, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = records.slice(from).find(pred);
          if (hit) {
            done();
            resolve(hit);
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for a model request: ${what}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    stop: () => void server.stop(true),
  };
}

// Model lists and token counts some clients ask for; anything else is a 404 the test can see in `records`.
function answerOther(method: string, path: string): Response {
  if (method === "GET" && /\/models$/.test(path)) return Response.json({ object: "list", data: [] });
  if (/count_tokens$/.test(path)) return Response.json({ input_tokens: 10 });
  if (/:countTokens$/.test(path)) return Response.json({ totalTokens: 10 });
  return Response.json(
    { error: { message: `scripted model: no route for ${method} ${path}` } },
    { status: 404 },
  );
}
