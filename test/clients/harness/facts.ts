// Facts about a client read off one run: what went over the MCP pipe (the tap) beside what reached the model.
import type { ClientRun } from "./run-client.ts";
import type { ToolResultSeen } from "./types.ts";
import type { TapLine } from "./wiring.ts";

export interface CallSeen {
  tool: string;
  sentAt: number;
  /** When our answer went out, or undefined if the client gave up first. */
  answeredAt?: number;
  /** When the client sent notifications/cancelled for it while it was still open. */
  cancelledAt?: number;
  progressToken: boolean;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON-RPC result
  result?: any;
}

export function calls(mcp: TapLine[]): CallSeen[] {
  const byId = new Map<string | number, CallSeen>();
  const out: CallSeen[] = [];
  for (const t of mcp) {
    const m = t.msg;
    if (!m) continue;
    if (t.dir === "in" && m.method === "tools/call") {
      const c: CallSeen = {
        tool: m.params.name,
        sentAt: t.at,
        progressToken: m.params._meta?.progressToken !== undefined,
      };
      byId.set(m.id, c);
      out.push(c);
    } else if (t.dir === "in" && m.method === "notifications/cancelled") {
      // opencode also "cancels" each call after its answer arrived: only a cancel before the answer cuts it.
      const c = byId.get(m.params?.requestId);
      if (c && c.answeredAt === undefined) c.cancelledAt = t.at;
    } else if (t.dir === "out" && m.id !== undefined && byId.has(m.id) && (m.result || m.error)) {
      const c = byId.get(m.id)!;
      c.answeredAt = t.at;
      c.result = m.result ?? m.error;
    }
  }
  return out;
}

/** What the model got of one of our answers: the text content, the structured content, both, or other. */
export function form(
  seen: ToolResultSeen,
  answer: { content?: Array<{ type: string; text?: string }>; structuredContent?: unknown },
): string {
  const text = (answer.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
  const structured = answer.structuredContent === undefined ? "" : JSON.stringify(answer.structuredContent);
  const hasText = text !== "" && seen.text.includes(text);
  const hasStructured = structured !== "" && seen.text.includes(structured);
  const parts = [hasStructured ? "structuredContent (JSON)" : "", hasText ? "text" : ""].filter(
    (p) => p !== "",
  );
  const what = parts.length === 0 ? "neither verbatim" : parts.join(" + ");
  const rest = [text, structured].reduce((acc, p) => (p === "" ? acc : acc.replace(p, "")), seen.text).trim();
  return rest === "" ? what : `${what}; around it: ${JSON.stringify(rest.slice(0, 80))}`;
}

export function initialize(mcp: TapLine[]): { client: string; protocol: string; capabilities: string } {
  const first = mcp.find(
    (t) => t.dir === "in" && (t.msg?.method === "initialize" || t.msg?.method === "server/discover"),
  );
  const p = first?.msg?.params ?? {};
  const info = p.clientInfo ?? p._meta?.["io.modelcontextprotocol/clientInfo"] ?? {};
  return {
    client: `${info.name ?? "?"} ${info.version ?? ""}`.trim(),
    protocol:
      `${first?.msg?.method ?? "none"} ${p.protocolVersion ?? p._meta?.["io.modelcontextprotocol/protocolVersion"] ?? ""}`.trim(),
    capabilities: JSON.stringify(p.capabilities ?? {}),
  };
}

export function methods(mcp: TapLine[]): string[] {
  return [...new Set(mcp.filter((t) => t.dir === "in" && t.msg?.method).map((t) => String(t.msg.method)))];
}

/** Arguments in the model-facing schema of `run` that our tools/list did not declare. */
export function injectedArgs(run: ClientRun): string[] {
  const listed = run.mcp.find((t) => t.dir === "out" && Array.isArray(t.msg?.result?.tools));
  const ours = listed?.msg.result.tools.find((t: { name: string }) => t.name === "run");
  const declared = new Set(Object.keys(ours?.inputSchema?.properties ?? {}));
  for (const r of run.model.main()) {
    const tool = r.turn!.tools.find((t) => /(^|[^a-z])run$/.test(t.name) && /awaitless/.test(t.name));
    const props = (tool?.schema as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (props) return Object.keys(props).filter((k) => !declared.has(k));
  }
  return [];
}
