// A raw JSON-RPC 2025-11-25 client of the compiled `awaitless mcp` over real pipes, following the Tasks spec
// (the SDK has no 2025 task runtime): every message both ways is checked against the 2025-11-25 schema.json.
import { BINARY, requireBinary } from "./stdio-client.ts";
import { schema2025Issues } from "./tasks-2025-schema.ts";

type Json = Record<string, unknown>;
export interface RawResponse {
  id: number;
  result?: Json;
  error?: { code: number; message: string; data?: unknown };
}

/** Which schema definition a message (or a response to a request of `method`) must satisfy. */
const REQUEST_DEFS: Record<string, string> = {
  initialize: "InitializeRequest",
  "tools/call": "CallToolRequest",
  "tasks/get": "GetTaskRequest",
  "tasks/result": "GetTaskPayloadRequest",
  "tasks/list": "ListTasksRequest",
  "tasks/cancel": "CancelTaskRequest",
};
const RESULT_DEFS: Record<string, string> = {
  initialize: "InitializeResult",
  "tools/list": "ListToolsResult",
  "tasks/get": "GetTaskResult",
  "tasks/result": "CallToolResult",
  "tasks/list": "ListTasksResult",
  "tasks/cancel": "CancelTaskResult",
};
const NOTIFICATION_DEFS: Record<string, string> = {
  "notifications/tasks/status": "TaskStatusNotification",
  "notifications/progress": "ProgressNotification",
};

export class Raw2025Client {
  readonly notifications: Json[] = [];
  /** Schema definitions checked so far, and every issue found (expected to stay empty). */
  readonly checked = new Set<string>();
  readonly issues: string[] = [];
  private nextId = 1;
  private readonly sent = new Map<number, Json>();
  private readonly waiting = new Map<number, (response: RawResponse) => void>();
  private readonly validations: Promise<void>[] = [];
  private stderr = "";
  private constructor(readonly proc: Bun.Subprocess<"pipe", "pipe", "pipe">) {}

  /** Spawns the server and initializes with these client capabilities (declare `tasks` to get tasks). */
  static async start(env: Record<string, string>, cwd: string, capabilities: Json): Promise<Raw2025Client> {
    requireBinary();
    const proc = Bun.spawn([BINARY, "mcp"], { env, cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const client = new Raw2025Client(proc);
    client.pump().catch(() => {});
    (async () => {
      for await (const chunk of proc.stderr) client.stderr += new TextDecoder().decode(chunk);
    })().catch(() => {});
    const init = await client.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities,
      clientInfo: { name: "raw-2025", version: "0" },
    });
    if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    client.write({ jsonrpc: "2.0", method: "notifications/initialized" });
    client.initializeResult = init.result!;
    return client;
  }

  initializeResult: Json = {};

  get pid(): number {
    return this.proc.pid;
  }

  get stderrText(): string {
    return this.stderr;
  }

  request(method: string, params?: Json): Promise<RawResponse> {
    const id = this.nextId++;
    const message: Json = { jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) };
    this.sent.set(id, message);
    this.validate(REQUEST_DEFS[method], message);
    const response = new Promise<RawResponse>((resolve) => this.waiting.set(id, resolve));
    this.write(message);
    return response;
  }

  /** Resolves with the first notification (seen so far or later) that satisfies `match`. */
  async notification(match: (n: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.notifications.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching notification within ${timeoutMs} ms`);
      await Bun.sleep(20);
    }
  }

  /** Waits for every schema check started so far. */
  async validated(): Promise<void> {
    await Promise.all(this.validations);
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    try {
      this.proc.kill(signal);
    } catch {
      // already gone
    }
  }

  async close(): Promise<void> {
    try {
      this.proc.stdin.end();
    } catch {
      // already closed
    }
    const exited = await Promise.race([this.proc.exited, Bun.sleep(10_000).then(() => undefined)]);
    if (exited === undefined) this.kill();
    await this.proc.exited;
  }

  private write(message: Json): void {
    this.proc.stdin.write(`${JSON.stringify(message)}\n`);
    this.proc.stdin.flush();
  }

  private validate(definition: string | undefined, value: unknown): void {
    if (definition === undefined) return;
    this.checked.add(definition);
    this.validations.push(
      schema2025Issues(definition, value).then((issues) => {
        for (const issue of issues) this.issues.push(`${definition}: ${issue}`);
      }),
    );
  }

  private async pump(): Promise<void> {
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() !== "") this.receive(JSON.parse(line) as Json);
      }
    }
  }

  private receive(message: Json): void {
    if (typeof message.method === "string") {
      this.validate(NOTIFICATION_DEFS[message.method], message);
      this.notifications.push(message);
      return;
    }
    const id = message.id as number;
    const request = this.sent.get(id);
    if (message.error !== undefined) this.validate("JSONRPCErrorResponse", message);
    else if (request !== undefined) {
      const method = request.method as string;
      const augmented = method === "tools/call" && (request.params as Json | undefined)?.task !== undefined;
      const definition =
        augmented && message.result && "task" in (message.result as Json)
          ? "CreateTaskResult"
          : method === "tools/call"
            ? "CallToolResult"
            : RESULT_DEFS[method];
      this.validate(definition, message.result);
    }
    this.waiting.get(id)?.(message as unknown as RawResponse);
    this.waiting.delete(id);
  }
}
