// OpenAI Responses API (Codex): function_call / function_call_output items, streamed as SSE events.
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

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output))
    return (output as Item[])
      .map((p) => (typeof p.text === "string" ? p.text : JSON.stringify(p)))
      .join("\n");
  return JSON.stringify(output);
}

/** Tools as declared; a namespace's members (Codex groups each MCP server's tools) as `NAMESPACE.member`. */
function declared(tools: Item[]): Array<{ name: string; description: string; schema: unknown }> {
  return tools.flatMap((t) => {
    if (Array.isArray(t.tools))
      return declared(t.tools as Item[]).map((m) => ({ ...m, name: `${t.name ?? ""}.${m.name}` }));
    if (typeof t.name !== "string") return [];
    return [{ name: t.name, description: String(t.description ?? ""), schema: t.parameters }];
  });
}

/** A namespaced tool is called by its member name with the namespace beside it. */
function splitName(name: string): Item {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? { name } : { namespace: name.slice(0, dot), name: name.slice(dot + 1) };
}

export const responses: VendorApi = {
  vendor: "responses",
  parse(body) {
    const input = (Array.isArray(body.input) ? body.input : []) as Item[];
    const names = new Map<string, string>();
    const results: ToolResultSeen[] = [];
    const texts: string[] = typeof body.instructions === "string" ? [body.instructions] : [];
    for (const it of input) {
      if (it.type === "function_call")
        names.set(String(it.call_id), it.namespace ? `${it.namespace}.${it.name}` : String(it.name));
      else if (it.type === "function_call_output") {
        const id = String(it.call_id);
        results.push({
          callId: id,
          name: names.get(id) ?? "",
          text: outputText(it.output),
          raw: it,
          bytes: byteLength(it),
        });
      } else if (it.type === "message" && it.role !== "assistant") {
        const content = it.content;
        texts.push(typeof content === "string" ? content : outputText(content));
      }
    }
    const tools = declared((body.tools ?? []) as Item[]);
    return turnOf("responses", { tools, results, texts, ...streamAndModel(body) });
  },
  render(reply: Reply, turn: Turn, seq: number) {
    const id = `resp_${seq}`;
    const item: Item =
      reply.kind === "tool"
        ? {
            type: "function_call",
            id: `fc_${seq}`,
            call_id: `call_${seq}`,
            ...splitName(reply.name),
            arguments: JSON.stringify(reply.args),
            status: "completed",
          }
        : {
            type: "message",
            id: `msg_${seq}`,
            role: "assistant",
            status: "completed",
            content: [
              {
                type: "output_text",
                text: reply.kind === "text" ? reply.text : JSON.stringify(reply.value),
                annotations: [],
              },
            ],
          };
    const usage = {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    };
    const response = {
      id,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      model: turn.model,
      status: "completed",
      output: [item],
      usage,
    };
    if (!turn.stream) return Response.json(response);
    const events: Array<{ event: string; data: Item }> = [
      {
        event: "response.created",
        data: { type: "response.created", response: { ...response, status: "in_progress", output: [] } },
      },
      {
        event: "response.output_item.added",
        data: {
          type: "response.output_item.added",
          output_index: 0,
          item: { ...item, status: "in_progress" },
        },
      },
    ];
    if (item.type === "message") {
      const text = (item.content as Item[])[0]!.text;
      events.push({
        event: "response.output_text.delta",
        data: {
          type: "response.output_text.delta",
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          delta: text,
        },
      });
    } else {
      events.push({
        event: "response.function_call_arguments.delta",
        data: {
          type: "response.function_call_arguments.delta",
          item_id: item.id,
          output_index: 0,
          delta: item.arguments,
        },
      });
    }
    events.push(
      {
        event: "response.output_item.done",
        data: { type: "response.output_item.done", output_index: 0, item },
      },
      { event: "response.completed", data: { type: "response.completed", response } },
    );
    return sse(events.map((e, i) => ({ event: e.event, data: { ...e.data, sequence_number: i } })));
  },
};
