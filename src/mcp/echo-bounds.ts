// JSON-RPC error answers with their texts bounded (tool errors are bounded where they are made: AwaitlessError): a
// protocol error may quote what the client sent, a tool name or a URI of a megabyte.
import type { JSONRPCMessage } from "@modelcontextprotocol/server";
import { boundedText } from "../core/model/errors.ts";

/** The most of a JSON-RPC error's message an answer carries. */
const MESSAGE_CHARS = 2000;

/** `message` unchanged unless it is an error answer; then its message (and a text `data`) bounded. */
export function boundedErrorResponse(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as { error?: { message?: unknown; data?: unknown } }).error;
  if (error === undefined || error === null || typeof error !== "object") return message;
  const long =
    (typeof error.message === "string" && error.message.length > MESSAGE_CHARS) ||
    (typeof error.data === "string" && error.data.length > MESSAGE_CHARS) ||
    (error.data !== undefined &&
      typeof error.data !== "string" &&
      JSON.stringify(error.data).length > MESSAGE_CHARS);
  if (!long) return message;
  const bounded: Record<string, unknown> = { ...error };
  if (typeof error.message === "string") bounded.message = boundedText(error.message, MESSAGE_CHARS);
  if (typeof error.data === "string") bounded.data = boundedText(error.data, MESSAGE_CHARS);
  else if (error.data !== undefined && JSON.stringify(error.data).length > MESSAGE_CHARS)
    bounded.data = boundedText(JSON.stringify(error.data), MESSAGE_CHARS);
  return { ...message, error: bounded } as JSONRPCMessage;
}
