// Anthropic Messages API (Claude Code): tool_use / tool_result blocks, streamed as SSE events.
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

type Block = Record<string, unknown>;

function blocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

/** The text a model reads in a tool_result's content (tool references named as such). */
function resultText(content: unknown): string {
  return blocks(content)
    .map((b) =>
      b.type === "text"
        ? String(b.text)
        : b.type === "tool_reference"
          ? `tool_reference:${b.tool_name}`
          : JSON.stringify(b),
    )
    .join("\n");
}

export const anthropic: VendorApi = {
  vendor: "anthropic",
  parse(body) {
    const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const names = new Map<string, string>();
    const results: ToolResultSeen[] = [];
    const texts: string[] = [];
    for (const m of messages) {
      for (const b of blocks(m.content)) {
        if (b.type === "tool_use") names.set(String(b.id), String(b.name));
        else if (b.type === "tool_result") {
          const id = String(b.tool_use_id);
          results.push({
            callId: id,
            name: names.get(id) ?? "",
            text: resultText(b.content),
            raw: b,
            bytes: byteLength(b),
          });
        } else if (b.type === "text" && m.role !== "assistant") texts.push(String(b.text));
      }
    }
    const tools = ((body.tools ?? []) as Block[]).map((t) => ({
      name: String(t.name),
      description: String(t.description ?? ""),
      schema: t.input_schema,
    }));
    return turnOf("anthropic", { tools, results, texts, ...streamAndModel(body) });
  },
  render(reply: Reply, turn: Turn, seq: number) {
    const id = `msg_${seq}`;
    const usage = { input_tokens: 10, output_tokens: 5 };
    const block: Block =
      reply.kind === "tool"
        ? { type: "tool_use", id: `toolu_${seq}`, name: reply.name, input: reply.args }
        : { type: "text", text: reply.kind === "text" ? reply.text : JSON.stringify(reply.value) };
    const stop = reply.kind === "tool" ? "tool_use" : "end_turn";
    if (!turn.stream) {
      return Response.json({
        id,
        type: "message",
        role: "assistant",
        model: turn.model,
        content: [block],
        stop_reason: stop,
        stop_sequence: null,
        usage,
      });
    }
    const start = block.type === "tool_use" ? { ...block, input: {} } : { type: "text", text: "" };
    const delta =
      block.type === "tool_use"
        ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
        : { type: "text_delta", text: block.text };
    return sse([
      {
        event: "message_start",
        data: {
          type: "message_start",
          message: {
            id,
            type: "message",
            role: "assistant",
            model: turn.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage,
          },
        },
      },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: start } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      {
        event: "message_delta",
        data: {
          type: "message_delta",
          delta: { stop_reason: stop, stop_sequence: null },
          usage: { output_tokens: 5 },
        },
      },
      { event: "message_stop", data: { type: "message_stop" } },
    ]);
  },
};
