// Splits the client's byte stream into request lines and drops any line over the limit, so an oversized
// request gets a JSON-RPC error instead of ending the session (the SDK's stdio buffer would close it).

/** The longest request line (JSON text, without its newline) the server reads: 10 MiB. */
export const MAX_REQUEST_LINE_BYTES = 10 * 1024 * 1024;

/** How much of each end of an oversized line is kept to find its request id. */
const ID_EDGE_BYTES = 4096;

type Id = string | number | null;

const ID_VALUE = String.raw`("(?:[^"\\]|\\.)*"|-?\d+)`;

function parseId(text: string | undefined): Id {
  if (text === undefined) return null;
  try {
    const id = JSON.parse(text) as unknown;
    return typeof id === "string" || typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}

/**
 * The top-level `"id"` of a JSON-RPC message from its first and last bytes: first, when the members before it
 * are plain scalars (`{"jsonrpc":"2.0","id":1,…`); last, when it is the last member (`…,"id":1}`, as the
 * TypeScript SDK writes requests). Null when neither shows it.
 */
export function requestIdFromEdges(prefix: string, suffix: string): Id {
  const scalar = String.raw`(?:"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)`;
  const member = String.raw`\s*"(?:[^"\\]|\\.)*"\s*:\s*${scalar}\s*,`;
  const head = new RegExp(String.raw`^\s*\{(?:${member}){0,8}?\s*"id"\s*:\s*${ID_VALUE}`).exec(prefix);
  if (head !== null) return parseId(head[1]);
  const tail = new RegExp(String.raw`,\s*"id"\s*:\s*${ID_VALUE}\s*\}\s*$`).exec(suffix);
  return parseId(tail?.[1]);
}

export class RequestLines {
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Bytes of the current line seen so far while dropping it (-1: not dropping). */
  private dropped = -1;
  private droppedPrefix = "";
  /** The last bytes of the line being dropped. */
  private droppedTail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly onLine: (line: Buffer) => void,
    private readonly onOversized: (bytes: number, id: Id) => void,
    private readonly limit = MAX_REQUEST_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline < 0 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline < 0) return;
      this.endLine();
      start = newline + 1;
    }
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropped >= 0) {
      this.dropped += piece.length;
      this.keepTail(piece);
      return;
    }
    if (this.partialBytes + piece.length <= this.limit) {
      this.partial.push(piece);
      this.partialBytes += piece.length;
      return;
    }
    const whole = Buffer.concat([...this.partial, piece]);
    this.droppedPrefix = whole.subarray(0, ID_EDGE_BYTES).toString("utf8");
    this.droppedTail = Buffer.alloc(0);
    this.keepTail(whole);
    this.dropped = whole.length;
    this.partial = [];
    this.partialBytes = 0;
  }

  private keepTail(piece: Buffer): void {
    const joined = Buffer.concat([this.droppedTail, piece.subarray(-ID_EDGE_BYTES)]);
    this.droppedTail = Buffer.from(joined.subarray(-ID_EDGE_BYTES));
  }

  private endLine(): void {
    if (this.dropped >= 0) {
      const bytes = this.dropped;
      const id = requestIdFromEdges(this.droppedPrefix, this.droppedTail.toString("utf8").replace(/\r$/, ""));
      this.dropped = -1;
      this.droppedPrefix = "";
      this.droppedTail = Buffer.alloc(0);
      this.onOversized(bytes, id);
      return;
    }
    const line = Buffer.concat([...this.partial, Buffer.from("\n")]);
    this.partial = [];
    this.partialBytes = 0;
    this.onLine(line);
  }
}
