// OpenAI Chat Completions (opencode, Qwen Code with an OpenAI-compatible provider): tool_calls / role "tool"
// messages, streamed as chat.completion.chunk SSE ending in [DONE].
import {
  byteLength,
  type Reply,
  sse,
  streamAndModel,
  type ToolResultSeen,
  type Turn,
  turnOf,
  type VendorApi,
} from "../types.ts";

type Item = Record<string, unknown>;

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return (content as Item[])
      .map((p) => (typeof p.text === "string" ? p.text : JSON.stringify(p)))
      .join("\n");
  return content === null || content === undefined ? "" : JSON.stringify(content);
}

export const chat: VendorApi = {
  vendor: "chat",
  parse(body) {
    const messages = (body.messages ?? []) as Item[];
    const names = new Map<string, string>();
    const results: ToolResultSeen[] = [];
    const texts: string[] = [];
    for (const m of messages) {
      if (m.role === "assistant" && Array.isArray(m.tool_calls))
        for (const c of m.tool_calls as Item[]) names.set(String(c.id), String((c.function as Item)?.name));
      if (m.role === "tool") {
        const id = String(m.tool_call_id);
        results.push({
          callId: id,
          name: names.get(id) ?? String(m.name ?? ""),
          text: contentText(m.content),
          raw: m,
          bytes: byteLength(m),
        });
      } else if (m.role !== "assistant") texts.push(contentText(m.content));
    }
    const tools = ((body.tools ?? []) as Item[]).map((t) => {
      const f = (t.function ?? t) as Item;
      return { name: String(f.name), description: String(f.description ?? ""), schema: f.parameters };
    });
    return turnOf("chat", { tools, results, texts, ...streamAndModel(body) });
  },
  render(reply: Reply, turn: Turn, seq: number) {
    const id = `chatcmpl-${seq}`;
    const created = Math.floor(Date.now() / 1000);
    const call =
      reply.kind === "tool"
        ? {
            id: `call_${seq}`,
            type: "function",
            function: { name: reply.name, arguments: JSON.stringify(reply.args) },
          }
        : undefined;
    const text =
      reply.kind === "text" ? reply.text : reply.kind === "json" ? JSON.stringify(reply.value) : null;
    const finish = call ? "tool_calls" : "stop";
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!turn.stream) {
      const message = { role: "assistant", content: text, ...(call ? { tool_calls: [call] } : {}) };
      return Response.json({
        id,
        object: "chat.completion",
        created,
        model: turn.model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    const chunk = (delta: Item, finish_reason: string | null, extra: Item = {}) => ({
      data: {
        id,
        object: "chat.completion.chunk",
        created,
        model: turn.model,
        choices: [{ index: 0, delta, finish_reason }],
        ...extra,
      },
    });
    const delta: Item = call
      ? { role: "assistant", content: null, tool_calls: [{ index: 0, ...call }] }
      : { role: "assistant", content: text };
    return sse([chunk(delta, null), chunk({}, finish, { usage }), { data: "[DONE]" }]);
  },
};
