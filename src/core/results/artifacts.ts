// The pure half of artifacts: inlining JSON artifact content and merging it into parsed_results.
import { posix } from "node:path";
import type { ArtifactEntry } from "../model/job.ts";
import type { Redactor } from "../util/redact.ts";

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

/** A copy of parsed JSON with every string value and every key redacted (keys that redact alike are numbered). */
export function redactJsonStrings(value: unknown, redactor: Redactor): unknown {
  if (typeof value === "string") return redactor.redact(value);
  if (Array.isArray(value)) return value.map((item) => redactJsonStrings(item, redactor));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      let key = redactor.redact(k);
      // Two keys that redact to the same text both stay, the later one numbered.
      for (let n = 2; key !== k && Object.hasOwn(out, key); n++) key = `${redactor.redact(k)} (${n})`;
      out[key] = redactJsonStrings(v, redactor);
    }
    return out;
  }
  return value;
}

/**
 * parsed_results, one shape whatever the number of artifacts: an object holding the top-level keys of every parsed
 * JSON artifact whose content is an object, merged in manifest order (a key two of them share takes the later
 * one's value); `{}` when there are none. Other content (arrays, numbers) and each whole file stay in `content`.
 */
export function parsedResults(entries: readonly ArtifactEntry[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const entry of entries) {
    const c = entry.content;
    if (!entry.exists || c === null || typeof c !== "object" || Array.isArray(c)) continue;
    // defineProperty: a "__proto__" key in a file is a plain key here, never the object's prototype
    for (const [key, value] of Object.entries(c)) {
      Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return merged;
}

/** Manifest order: by path, then by declaration (code-unit order, so every reader sorts the same way). */
export function compareArtifacts(a: ArtifactEntry, b: ArtifactEntry): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.declared_path !== b.declared_path) return a.declared_path < b.declared_path ? -1 : 1;
  return 0;
}

// ---------------------------------------------------------------------------------------------------------------
// Shared by every collector (this machine, SSH hosts): limits, declaration normalisation, glob helpers, reasons.

/** Most files one declaration (a directory or a glob) may list; the rest is summarised in one note entry. */
export const MAX_ENTRIES_PER_DECLARATION = 1000;
/** Candidates examined per declaration (glob matches here, listed entries on a host) before the listing is cut. */
export const MAX_SCAN_PER_DECLARATION = 20 * MAX_ENTRIES_PER_DECLARATION;

/** The `reason` texts of manifest entries, the same on every backend for the same situation. */
export const ArtifactReason = {
  malformed: "empty or malformed artifact path",
  outsideDotdot: "resolves outside the job's working directory through '..'; not read",
  outsideAbsolute: "absolute path outside the job's working directory; not read",
  outsideSymlink: "resolves outside the job's working directory through a symbolic link; not read",
  noSuchPath: "no such file or directory",
  noMatch: "no file matches this pattern",
  emptyDirectory: "directory has no files",
  brokenLink: "broken symbolic link",
  notRegularFile: "not a regular file; not read",
  disappeared: "disappeared while being collected",
  cwdUnreadable: (dir: string, code: string) => `the job's working directory ${dir} cannot be read (${code})`,
  unlistable: (code: string) => `directory cannot be listed (${code})`,
  unresolvable: (code: string) => `cannot be resolved (${code})`,
  unreadable: (code: string) => `exists but cannot be read (${code})`,
} as const;

/** A declaration that yields no file: `path` is what is reported (the declaration, or its normalised form). */
export function absentArtifact(
  path: string,
  declared: string,
  reason: string,
  remote: boolean,
): ArtifactEntry {
  return { path, declared_path: declared, exists: false, remote, reason };
}

/** The note closing a listing cut at `limit` files (`what`: "directory holds" or "pattern matches"). */
export function truncationNote(
  path: string,
  declared: string,
  what: "directory holds" | "pattern matches",
  limit: number,
  remote: boolean,
): ArtifactEntry {
  return {
    path,
    declared_path: declared,
    exists: true,
    remote,
    reason: `${what} more than ${limit} files; only the first ${limit} by path are listed — declare narrower paths to see the rest`,
  };
}

/** Whether path `p` is `root` or below it (both absolute, POSIX): the confinement check of every collector. */
export function isInsideDir(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** Whether a declaration uses glob syntax (`*`, `**`, `?`, `[...]`, `{a,b}`). */
export function hasGlobSyntax(s: string): boolean {
  return /[*?[\]{}]/.test(s);
}

/**
 * The directory a glob is matched under: its segments before the first one with glob syntax (or a backslash
 * escape), "." when there are none. `results/**\/*.json` → `results`; `*.json` → `.`; a literal path → its parent.
 */
export function globStaticPrefix(pattern: string): string {
  const segments = pattern.split("/");
  const literal: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (hasGlobSyntax(s) || s.includes("\\")) break;
    literal.push(s);
  }
  if (literal.length === 0) return pattern.startsWith("/") ? "/" : ".";
  const prefix = literal.join("/");
  return prefix === "" ? "/" : prefix;
}

/** Where a declaration points, before anything is looked at on the target. */
export type DeclarationPlan =
  /** Refused as it stands: malformed, or outside the cwd through '..'. */
  | { kind: "refused"; path: string; reason: string }
  /** Lexically normalised, relative to the cwd, inside it ("." for the cwd itself). */
  | { kind: "relative"; rel: string }
  /** Lexically normalised absolute path (no trailing slash): inside the cwd only if it is under it. */
  | { kind: "absolute"; abs: string };

const escapesUp = (rel: string): boolean => rel === ".." || rel.startsWith("../") || posix.isAbsolute(rel);

/** Normalises one declaration (POSIX paths: local and remote targets are POSIX systems). */
export function planDeclaration(declared: string): DeclarationPlan {
  if (declared.trim() === "" || declared.includes("\0")) {
    return { kind: "refused", path: declared, reason: ArtifactReason.malformed };
  }
  if (posix.isAbsolute(declared)) {
    return { kind: "absolute", abs: posix.normalize(declared).replace(/(.)\/+$/, "$1") };
  }
  const rel = posix.normalize(declared).replace(/\/+$/, "") || ".";
  if (escapesUp(rel)) return { kind: "refused", path: declared, reason: ArtifactReason.outsideDotdot };
  return { kind: "relative", rel };
}

/** An absolute declaration relative to the (absolute, logical) cwd, or null when it is outside it. */
export function relativeToCwd(cwd: string, abs: string): string | null {
  const rel = posix.relative(cwd, abs);
  if (escapesUp(rel)) return null;
  return rel === "" ? "." : rel;
}
