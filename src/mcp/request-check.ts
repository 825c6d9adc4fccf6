// Each request line before the SDK sees it: a line that is not JSON gets a JSON-RPC -32700 answer and one that is
// not a JSON-RPC message -32600 (the SDK would skip or drop them unanswered, and its client would wait forever);
// bytes that are not UTF-8 are kept as lone surrogates (not U+FFFD), so the argument holding them is refused by name.
import { INVALID_REQUEST, PARSE_ERROR, parseJSONRPCMessage } from "@modelcontextprotocol/server";
import { decodeKeepingBadBytes, isUtf8 } from "../core/util/utf8-text.ts";
import { requestIdFromEdges } from "./request-lines.ts";

type Id = string | number | null;

export type LineVerdict =
  | { kind: "skip" }
  | { kind: "forward"; line: Buffer }
  | { kind: "answer"; id: Id; code: number; message: string };

/** How much of a parser's complaint an answer quotes (it may quote the line). */
const QUOTED_CHARS = 200;

function quoted(text: string): string {
  return text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
}

const EDGE_CHARS = 4096;

function idOf(text: string): Id {
  return requestIdFromEdges(text.slice(0, EDGE_CHARS), text.slice(-EDGE_CHARS).trimEnd());
}

/** What to do with one request line (with or without its newline). */
export function checkRequestLine(raw: Buffer): LineVerdict {
  let end = raw.length;
  while (end > 0 && (raw[end - 1] === 0x0a || raw[end - 1] === 0x0d)) end--;
  const bytes = raw.subarray(0, end);
  const utf8 = isUtf8(bytes);
  const text = decodeKeepingBadBytes(bytes);
  if (text.trim() === "") return { kind: "skip" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return {
      kind: "answer",
      id: idOf(text),
      code: PARSE_ERROR,
      message:
        `Parse error: the request line is not JSON (${quoted(String((e as Error)?.message ?? e))}); it was not read. ` +
        "Send one JSON-RPC message per line, as UTF-8 JSON.",
    };
  }
  try {
    parseJSONRPCMessage(value);
  } catch {
    const id = (value as { id?: unknown })?.id;
    return {
      kind: "answer",
      id: typeof id === "string" || typeof id === "number" ? id : null,
      code: INVALID_REQUEST,
      message:
        'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message ({"jsonrpc":"2.0","id":…,"method":…} for a request, without "id" for a notification; one message per line, no batches); it was not read.',
    };
  }
  // Not UTF-8: the message again as JSON, its bad bytes written as \udcXX escapes, which the SDK reads back as the
  // same lone surrogates; the tool's argument check names the argument that holds them.
  if (!utf8) return { kind: "forward", line: Buffer.from(`${JSON.stringify(value)}\n`) };
  return {
    kind: "forward",
    line: raw[raw.length - 1] === 0x0a ? raw : Buffer.concat([raw, Buffer.from("\n")]),
  };
}
