// What the scripted model sees and says, the same for every vendor's API (each vendor file translates).

/** A tool the client declared to its model. */
export interface ToolDecl {
  name: string;
  description: string;
  schema: unknown;
}

/** A tool result as the client put it in front of the model (in the request after the call). */
export interface ToolResultSeen {
  callId: string;
  /** The tool's name as the model called it ("" when the client did not repeat it). */
  name: string;
  /** Every text the model reads for this result, joined (JSON payloads as the client serialised them). */
  text: string;
  /** The vendor's own item for this result, as sent. */
  raw: unknown;
  /** UTF-8 bytes of `raw` serialised: what this result costs in the model's input. */
  bytes: number;
}

/** One request of the client, as the scripted model reads it. */
export interface Turn {
  vendor: Vendor;
  /** A request that offers tools: the agent's own loop (side requests such as titles offer none). */
  main: boolean;
  tools: ToolDecl[];
  results: ToolResultSeen[];
  /** The user's and the client's other text (system reminders, injected events), last message last. */
  texts: string[];
  stream: boolean;
  model: string;
}

export type Reply =
  /** A tool call; `ours` while it still names one of our tools by its own name (before the client's route). */
  | { kind: "tool"; name: string; args: Record<string, unknown>; ours?: boolean }
  | { kind: "text"; text: string }
  /** A JSON answer for a side request that asked for one (Gemini's next-speaker check, routers). */
  | { kind: "json"; value: unknown };

export type Vendor = "anthropic" | "responses" | "chat" | "gemini";

export interface VendorApi {
  vendor: Vendor;
  /** Parses a request body into what the model sees. */
  parse(body: Record<string, unknown>, path: string): Turn;
  /** Renders the model's reply as the client expects it (streamed when the request streams). */
  render(reply: Reply, turn: Turn, seq: number): Response;
}

export function byteLength(value: unknown): number {
  return Buffer.byteLength(typeof value === "string" ? value : JSON.stringify(value));
}

export function sse(events: Array<{ event?: string; data: unknown }>): Response {
  const text = events
    .map(
      (e) =>
        `${e.event ? `event: ${e.event}\n` : ""}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`,
    )
    .join("");
  return new Response(text, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** A request's turn; "main" when it offers tools (the agent's loop). */
export function turnOf(
  vendor: Vendor,
  parts: Pick<Turn, "tools" | "results" | "texts" | "stream" | "model">,
): Turn {
  return { vendor, main: parts.tools.length > 0, ...parts };
}

/** Whether a request streams, and the model it names (the Anthropic and OpenAI bodies say both). */
export function streamAndModel(body: Record<string, unknown>): Pick<Turn, "stream" | "model"> {
  return { stream: body.stream === true, model: String(body.model ?? "") };
}
