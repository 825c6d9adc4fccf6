// Gemini API (Gemini CLI): functionCall / functionResponse parts; `:streamGenerateContent?alt=sse` streams
// GenerateContentResponse objects as SSE data lines.
import {
  byteLength,
  type Reply,
  sse,
  type ToolResultSeen,
  type Turn,
  turnOf,
  type VendorApi,
} from "../types.ts";

type Item = Record<string, unknown>;

/** A functionResponse's text: its string fields as the model reads them (`output`), else its JSON. */
function responseText(response: unknown): string {
  if (typeof response === "string") return response;
  const values = Object.values((response ?? {}) as Item);
  if (values.length > 0 && values.every((v) => typeof v === "string")) return values.join("\n");
  return JSON.stringify(response);
}

export const gemini: VendorApi = {
  vendor: "gemini",
  parse(body, path) {
    const contents = (body.contents ?? []) as Array<{ role?: string; parts?: Item[] }>;
    const results: ToolResultSeen[] = [];
    const texts: string[] = [];
    let n = 0;
    for (const c of contents) {
      for (const p of c.parts ?? []) {
        const fr = p.functionResponse as Item | undefined;
        if (fr) {
          n += 1;
          const id = typeof fr.id === "string" ? fr.id : `${fr.name}#${n}`;
          const text = responseText(fr.response);
          results.push({ callId: id, name: String(fr.name), text, raw: p, bytes: byteLength(p) });
        } else if (typeof p.text === "string" && c.role !== "model") texts.push(p.text);
      }
    }
    const tools = ((body.tools ?? []) as Item[]).flatMap((t) =>
      ((t.functionDeclarations ?? []) as Item[]).map((f) => ({
        name: String(f.name),
        description: String(f.description ?? ""),
        schema: f.parametersJsonSchema ?? f.parameters,
      })),
    );
    const model = /models\/([^:]+):/.exec(path)?.[1] ?? "";
    return turnOf("gemini", {
      tools,
      results,
      texts,
      stream: path.includes(":streamGenerateContent"),
      model,
    });
  },
  render(reply: Reply, turn: Turn) {
    const part =
      reply.kind === "tool"
        ? { functionCall: { name: reply.name, args: reply.args } }
        : { text: reply.kind === "text" ? reply.text : JSON.stringify(reply.value) };
    const response = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: turn.model,
    };
    return turn.stream ? sse([{ data: response }]) : Response.json(response);
  },
};
