// The pure half of artifacts: inlining JSON artifact content and merging it into parsed_results.
import type { ArtifactEntry } from "./job.ts";
import type { Redactor } from "./redact.ts";

export type { ArtifactEntry };

/** What a JSON artifact contributes to its manifest entry: parsed content, or why there is none. */
export type ArtifactContent = { content: unknown } | { parse_error: string } | Record<string, never>;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Only `.json` files (any case) are parsed inline. */
export function isJsonArtifactPath(path: string): boolean {
  return path.toLowerCase().endsWith(".json");
}

/** The parse_error for a JSON file whose size exceeds the inline bound. */
export function tooLargeToInline(sizeBytes: number, maxBytes: number): string {
  return `too large to inline (${sizeBytes} bytes > ${maxBytes})`;
}

/**
 * Parses a `.json` artifact within `maxBytes` into `{content}`; otherwise `{parse_error}` saying why
 * (too large, not UTF-8, not JSON). Other files contribute nothing (`{}`).
 */
export function parseArtifactContent(path: string, bytes: Uint8Array, maxBytes: number): ArtifactContent {
  if (!isJsonArtifactPath(path)) return {};
  if (bytes.length > maxBytes) return { parse_error: tooLargeToInline(bytes.length, maxBytes) };
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { parse_error: "not valid UTF-8" };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { content: JSON.parse(text) };
  } catch (err) {
    return { parse_error: `invalid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** A copy of parsed JSON with every string value redacted (keys are left as they are). */
export function redactJsonStrings(value: unknown, redactor: Redactor): unknown {
  if (typeof value === "string") return redactor.redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJsonStrings(item, redactor));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactJsonStrings(v, redactor);
    return out;
  }
  return value;
}

/**
 * parsed_results: null when no artifact has parsed content, the content itself when exactly one has,
 * otherwise an object keyed by artifact path.
 */
export function parsedResults(entries: readonly ArtifactEntry[]): unknown {
  const parsed = entries.filter((e) => e.exists && Object.hasOwn(e, "content"));
  if (parsed.length === 0) return null;
  if (parsed.length === 1) return (parsed[0] as ArtifactEntry).content;
  const merged: Record<string, unknown> = {};
  for (const entry of parsed) merged[entry.path] = entry.content;
  return merged;
}

/** Manifest order: by path, then by declaration (code-unit order, so every reader sorts the same way). */
export function compareArtifacts(a: ArtifactEntry, b: ArtifactEntry): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.declared_path !== b.declared_path) return a.declared_path < b.declared_path ? -1 : 1;
  return 0;
}
