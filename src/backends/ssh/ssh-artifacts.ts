// Declared artifacts of a remote job, with the same manifest as on this machine (artifacts-local.ts): the host lists
// and resolves (ARTIFACTS), the client matches globs, confines, sorts and limits, then the host sizes, dates and
// hashes the chosen files and sends small JSON back (ARTIFACT_FILES). Two round trips, one when nothing matched.

import type { ArtifactEntry } from "../../core/model/job.ts";
import {
  ArtifactReason,
  absentArtifact,
  compareArtifacts,
  globStaticPrefix,
  hasGlobSyntax,
  isInsideDir,
  isJsonArtifactPath,
  MAX_ENTRIES_PER_DECLARATION,
  MAX_SCAN_PER_DECLARATION,
  parseArtifactContent,
  planDeclaration,
  redactJsonStrings,
  tooLargeToInline,
  truncationNote,
} from "../../core/results/artifacts.ts";
import { sha256Hex } from "../../core/results/canonical-json.ts";
import type { Redactor } from "../../core/util/redact.ts";
import { ARTIFACT_FILES, ARTIFACTS } from "../../wrapper/host-scripts.ts";
import type { SshHost } from "./ssh-host.ts";

/** What the collector needs from a host: run one remote script (tests run them with a local sh). */
export type ScriptRunner = Pick<SshHost, "run">;

export interface RemoteCollectOptions {
  /** When given, string values inside parsed JSON are redacted. */
  redactor?: Redactor;
  maxEntriesPerDeclaration?: number;
  /** Listing rows read per declaration before the listing is cut (default MAX_SCAN_PER_DECLARATION). */
  maxListedPerDeclaration?: number;
}

/** Type of a listed entry: regular file, directory, unreadable directory, other, symbolic link. */
type Kind = "f" | "d" | "u" | "o" | "l";
/** What a path resolves to: regular file, directory, other, nothing. */
type Target = "f" | "d" | "o" | "-";

export interface ListedEntry {
  kind: Kind;
  /** For symbolic links: what they point to. */
  target: Target;
  /** For symbolic links that resolve: their real path. */
  real: string | null;
  /** Relative to the listed directory ("." for the directory itself). */
  sub: string;
}

export interface PathHead {
  /** Type of the path itself; "-" when it does not exist. */
  kind: Kind | "-";
  target: Target;
  real: string | null;
}

export interface DeclarationReport {
  /** An absolute path outside the cwd. */
  outside: boolean;
  rel: string;
  prefix: string | null;
  literal: PathHead | null;
  prefixHead: PathHead | null;
  listing: ListedEntry[];
}

export type ListReport = { error: string } | { base: string; declarations: DeclarationReport[] };

const KINDS = new Set(["f", "d", "u", "o", "l"]);
const TARGETS = new Set(["f", "d", "o", "-"]);

/** A field of the report: `-` none, `p` + text, `x` + hex bytes (texts holding a TAB or a newline). */
export function decodeField(field: string | undefined): string | null {
  if (field === undefined || field === "-" || field === "") return null;
  if (field.startsWith("p")) return field.slice(1);
  if (field.startsWith("x") && /^x(?:[0-9a-f]{2})*$/.test(field)) {
    return Buffer.from(field.slice(1), "hex").toString("utf8");
  }
  throw new Error(`unexpected field in the artifact listing: ${JSON.stringify(field.slice(0, 80))}`);
}

const asTarget = (s: string | undefined): Target => (s && TARGETS.has(s) ? (s as Target) : "-");

/** Parses the ARTIFACTS report (one section per sent declaration, in order). */
export function parseListReport(text: string): ListReport {
  const declarations: DeclarationReport[] = [];
  let base: string | null = null;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const f = line.split("\t");
    const tag = f[0] ?? "";
    const current = declarations[declarations.length - 1];
    if (tag === "E") return { error: f[1] || "EACCES" };
    if (tag === "B") base = decodeField(f[1]);
    // Before the report starts, a login shell may have printed anything (a banner from .bashrc): skip it.
    else if (base === null) continue;
    else if (tag === "@") {
      declarations.push({
        outside: f[1] === "A",
        rel: f[1] === "A" ? "" : (decodeField(f[2]) ?? "."),
        prefix: f[1] === "A" ? null : decodeField(f[3]),
        literal: null,
        prefixHead: null,
        listing: [],
      });
    } else if ((tag === "L" || tag === "P") && current) {
      const head: PathHead = {
        kind: f[1] && KINDS.has(f[1]) ? (f[1] as Kind) : "-",
        target: asTarget(f[2]),
        real: decodeField(f[3]),
      };
      if (tag === "L") current.literal = head;
      else current.prefixHead = head;
    } else if (KINDS.has(tag) && current && f.length >= 4) {
      const sub = decodeField(f[3]);
      if (sub !== null)
        current.listing.push({ kind: tag as Kind, target: asTarget(f[1]), real: decodeField(f[2]), sub });
    } else {
      throw new Error(`unexpected line in the artifact listing: ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  if (base === null) throw new Error("the artifact listing ended before naming the working directory");
  // Confinement is decided against this path: anything but an absolute one (pwd -P failed) would confine nothing.
  if (!base.startsWith("/"))
    throw new Error(`the host gave no physical path for the working directory (${JSON.stringify(base)})`);
  return { base, declarations };
}

/**
 * A matcher with the semantics of `Bun.Glob.scan({dot: false})` over a listing: the whole pattern must match
 * (`Bun.Glob.match`), and, segment by segment, a name starting with "." only matches a pattern segment that starts
 * with "." itself (`**` never crosses one).
 */
export function globMatcher(pattern: string): (rel: string) => boolean {
  const whole = new Bun.Glob(pattern);
  const segments = pattern.split("/");
  const globs = segments.map((s) => (s === "**" ? null : new Bun.Glob(s)));
  return (rel) => {
    if (!whole.match(rel)) return false;
    const parts = rel.split("/");
    const memo = new Map<number, boolean>();
    const at = (i: number, j: number): boolean => {
      const key = i * (parts.length + 1) + j;
      const known = memo.get(key);
      if (known !== undefined) return known;
      let ok: boolean;
      const glob = globs[i] as Bun.Glob | null;
      if (i === segments.length) ok = j === parts.length;
      else if (glob === null) {
        ok = at(i + 1, j) || (j < parts.length && !(parts[j] as string).startsWith(".") && at(i, j + 1));
      } else if (j === parts.length) ok = false;
      else {
        const name = parts[j] as string;
        ok =
          (!name.startsWith(".") || (segments[i] as string).startsWith(".")) &&
          glob.match(name) &&
          at(i + 1, j + 1);
      }
      memo.set(key, ok);
      return ok;
    };
    return at(0, 0);
  };
}

/** What the host is asked to list for a glob under its prefix: how deep a match can be, whether dots can match. */
export function listingBounds(pattern: string, prefix: string): { depth: string; dots: boolean } {
  const rest =
    prefix === "." ? pattern : pattern.slice(prefix.endsWith("/") ? prefix.length : prefix.length + 1);
  const segments = rest.split("/");
  const unbounded = segments.some((s) => s.includes("**")) || /\{[^}]*\/[^}]*\}/.test(rest);
  return {
    depth: unbounded ? "" : String(segments.length),
    dots: segments.some((s) => s.startsWith(".") || s.startsWith("\\")),
  };
}

/** Directory-walk order (depth first, names sorted at each level), as the local collector cuts a directory. */
export function compareWalkOrder(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i] as string;
    const q = y[i] as string;
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

const joinPath = (dir: string, sub: string): string =>
  sub === "." ? dir : dir === "." ? sub : dir.endsWith("/") ? `${dir}${sub}` : `${dir}/${sub}`;

/** A file to describe in the second round trip. */
interface Pending {
  rel: string;
  declared: string;
  real: string;
  json: boolean;
}

type Slot = ArtifactEntry | Pending;

interface ListContext {
  /** The cwd's physical path on the host. */
  base: string;
  limit: number;
  listCap: number;
}

/** The manifest for one declaration, as collectDeclaration (artifacts-local.ts) would give it on the host. */
function planEntries(ctx: ListContext, declared: string, d: DeclarationReport): Slot[] {
  const absent = (path: string, reason: string) => absentArtifact(path, declared, reason, true);
  if (d.outside) return [absent(declared, ArtifactReason.outsideAbsolute)];
  const lit = d.literal;
  if (lit && lit.kind !== "-") return collectPath(ctx, declared, d.rel, lit, d.listing);
  if (!hasGlobSyntax(declared)) return [absent(d.rel, ArtifactReason.noSuchPath)];
  return collectGlob(ctx, declared, d);
}

/** One file's entry (fileEntry in artifacts-local.ts) up to what the second round trip adds. */
function fileSlot(
  ctx: ListContext,
  declared: string,
  rel: string,
  real: string | null,
  target: Target,
): Slot {
  if (real === null) {
    // The host says it exists but could not name its real path: no realpath, readlink -f or cd -P worked there.
    const why =
      target === "-" ? ArtifactReason.brokenLink : ArtifactReason.unresolvable("no realpath on the host");
    return absentArtifact(rel, declared, why, true);
  }
  if (!isInsideDir(ctx.base, real)) return absentArtifact(rel, declared, ArtifactReason.outsideSymlink, true);
  if (target === "-") return absentArtifact(rel, declared, ArtifactReason.disappeared, true);
  if (target !== "f") return absentArtifact(rel, declared, ArtifactReason.notRegularFile, true);
  return { rel, declared, real, json: isJsonArtifactPath(rel) };
}

/** How a listed entry resolves: its own real path for links, else under the listed directory's real path. */
function resolveListed(dirReal: string, e: ListedEntry): { real: string | null; target: Target } {
  if (e.kind === "l") return { real: e.real, target: e.target };
  return { real: joinPath(dirReal, e.sub), target: e.kind === "f" ? "f" : e.kind === "o" ? "o" : "d" };
}

function listingCutNote(path: string, declared: string, cap: number): ArtifactEntry {
  return {
    path,
    declared_path: declared,
    exists: true,
    remote: true,
    reason: `more than ${cap} entries to examine on the host; only the first ${cap} found were examined — declare narrower paths to see the rest`,
  };
}

function collectPath(
  ctx: ListContext,
  declared: string,
  rel: string,
  lit: PathHead,
  listing: ListedEntry[],
): Slot[] {
  if (lit.real === null) return [absentArtifact(rel, declared, ArtifactReason.brokenLink, true)];
  if (!isInsideDir(ctx.base, lit.real))
    return [absentArtifact(rel, declared, ArtifactReason.outsideSymlink, true)];
  if (lit.target !== "d") return [fileSlot(ctx, declared, rel, lit.real, lit.target)];
  const relDir = rel === "." ? "" : rel;
  const cut = listing.length > ctx.listCap;
  const rows = listing.slice(0, ctx.listCap).sort((a, b) => compareWalkOrder(a.sub, b.sub));
  const files: Slot[] = [];
  const unlisted: Slot[] = [];
  let truncated = false;
  for (const e of rows) {
    if (e.kind === "d") continue;
    if (e.kind === "u") {
      const path = e.sub === "." ? relDir || "." : joinPath(relDir || ".", e.sub);
      unlisted.push(absentArtifact(`${path}/`, declared, ArtifactReason.unlistable("EACCES"), true));
      continue;
    }
    if (files.length >= ctx.limit) {
      truncated = true;
      break;
    }
    const r = resolveListed(lit.real, e);
    files.push(fileSlot(ctx, declared, relDir ? `${relDir}/${e.sub}` : e.sub, r.real, r.target));
  }
  const slots = [...files, ...unlisted];
  if (slots.length === 0) return [absentArtifact(rel, declared, ArtifactReason.emptyDirectory, true)];
  if (truncated) slots.push(truncationNote(`${rel}/`, declared, "directory holds", ctx.limit, true));
  else if (cut) slots.push(listingCutNote(`${rel}/`, declared, ctx.listCap));
  return slots;
}

function collectGlob(ctx: ListContext, declared: string, d: DeclarationReport): Slot[] {
  const head = d.prefixHead;
  const prefix = d.prefix ?? ".";
  const cut = d.listing.length > ctx.listCap;
  const candidates: { rel: string; e: ListedEntry }[] = [];
  if (head && head.kind !== "-" && head.target === "d") {
    const match = globMatcher(d.rel);
    for (const e of d.listing.slice(0, ctx.listCap)) {
      if (e.sub === ".") continue;
      const rel = joinPath(prefix, e.sub);
      if (match(rel)) candidates.push({ rel, e });
    }
  }
  candidates.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const dirReal = head?.real ?? null;
  const files: { rel: string; real: string | null; target: Target }[] = [];
  for (const { rel, e } of candidates) {
    // Real directories are containers, not artifacts; symbolic links are checked where they point. Bun's scan
    // yields no FIFOs, sockets or devices, so neither does this.
    if (e.kind === "d" || e.kind === "u" || e.kind === "o") continue;
    const r = dirReal === null ? { real: null, target: "-" as Target } : resolveListed(dirReal, e);
    if (e.kind === "l" && r.real !== null && isInsideDir(ctx.base, r.real) && r.target === "d") continue;
    files.push({ rel, ...r });
  }
  if (files.length === 0) {
    const none = [absentArtifact(declared, declared, ArtifactReason.noMatch, true)];
    return cut ? [...none, listingCutNote(declared, declared, ctx.listCap)] : none;
  }
  const slots = files.slice(0, ctx.limit).map((f) => fileSlot(ctx, declared, f.rel, f.real, f.target));
  if (files.length > ctx.limit)
    slots.push(truncationNote(declared, declared, "pattern matches", ctx.limit, true));
  else if (cut) slots.push(listingCutNote(declared, declared, ctx.listCap));
  return slots;
}

/** One file's answer from ARTIFACT_FILES. */
export type FileReport =
  | { status: "gone" }
  | { status: "unreadable"; size: number; mtime: string | null }
  | { status: "hash"; size: number; mtime: string | null; sha256: string | null }
  /** A JSON file: its first max+1 bytes, so the client tells "too large" from the length. */
  | { status: "json"; size: number; mtime: string | null; sha256: string | null; head: Uint8Array };

/** `size seconds [date time.fraction zone]` → size and an ISO time with milliseconds when the fraction is given. */
export function parseStat(text: string): { size: number; mtime: string | null } | null {
  const f = text.trim().split(/\s+/);
  if (!f[0] || !/^\d+$/.test(f[0])) return null;
  const size = Number(f[0]);
  if (!f[1] || !/^\d+$/.test(f[1])) return { size, mtime: null };
  const frac = /\.(\d+)/.exec(f[3] ?? "")?.[1] ?? "";
  const ms = Number(f[1]) * 1000 + Number(frac.padEnd(3, "0").slice(0, 3));
  return { size, mtime: new Date(ms).toISOString() };
}

const shaOf = (line: string | undefined): string | null => /\b([0-9a-f]{64})\b/.exec(line ?? "")?.[1] ?? null;

const FILES_MARKER = "#awaitless-files";

/** Parses the ARTIFACT_FILES output into one report per requested file, in order (unanswered: gone). */
export function parseFilesReport(text: string, count: number): FileReport[] {
  const reports: FileReport[] = Array.from({ length: count }, () => ({ status: "gone" }) as FileReport);
  const lines = text.split("\n");
  const garbled = (why: string) => new Error(`the artifact report from the host is garbled (${why})`);
  // The report starts after its marker; a login shell may have printed anything before it (a banner from .bashrc).
  let k = lines.indexOf(FILES_MARKER) + 1;
  if (k === 0) throw garbled("no start marker");
  while (k < lines.length) {
    const line = lines[k++] as string;
    if (line === "") continue;
    const m = /^(\d+) (gone|unreadable|hash|json)$/.exec(line);
    const i = Number(m?.[1]) - 1;
    if (!m || i < 0 || i >= count) throw garbled(JSON.stringify(line.slice(0, 80)));
    const status = m[2];
    if (status === "gone") continue;
    if (k >= lines.length) throw garbled("cut short");
    const st = parseStat(lines[k++] as string);
    let head: Uint8Array | null = null;
    if (status === "json") {
      const hex: string[] = [];
      while (k < lines.length && lines[k] !== ".") hex.push(lines[k++] as string);
      if (k++ >= lines.length) throw garbled("cut short in a file's content");
      const digits = hex.join("").replace(/\s+/g, "");
      if (!/^(?:[0-9a-f]{2})*$/.test(digits)) throw garbled("content is not hex");
      head = new Uint8Array(Buffer.from(digits, "hex"));
    }
    const sha = status === "unreadable" ? null : shaOf(lines[k++]);
    if (st === null) continue; // vanished between the checks and stat
    if (status === "unreadable") reports[i] = { status, ...st };
    else if (head !== null) reports[i] = { status: "json", ...st, sha256: sha, head };
    else reports[i] = { status: "hash", ...st, sha256: sha };
  }
  return reports;
}

function describeFile(p: Pending, r: FileReport, maxInlineBytes: number, redactor?: Redactor): ArtifactEntry {
  if (r.status === "gone") return absentArtifact(p.rel, p.declared, ArtifactReason.disappeared, true);
  const entry: ArtifactEntry = {
    path: p.rel,
    declared_path: p.declared,
    exists: true,
    remote: true,
    size_bytes: r.size,
  };
  if (r.mtime !== null) entry.modified_at = r.mtime;
  if (r.status === "unreadable") {
    entry.reason = ArtifactReason.unreadable("EACCES");
  } else if (r.status === "json" && r.head.length <= maxInlineBytes) {
    // The whole file: size and hash from the bytes parsed, as the local collector does.
    entry.size_bytes = r.head.length;
    entry.sha256 = sha256Hex(r.head);
    const parsed = parseArtifactContent(p.rel, r.head, maxInlineBytes);
    if ("content" in parsed)
      entry.content = redactor ? redactJsonStrings(parsed.content, redactor) : parsed.content;
    if ("parse_error" in parsed) entry.parse_error = parsed.parse_error;
  } else {
    if (r.sha256 !== null) entry.sha256 = r.sha256;
    if (r.status === "json")
      entry.parse_error = tooLargeToInline(Math.max(r.size, r.head.length), maxInlineBytes);
  }
  return entry;
}

/**
 * The manifest for `declared` (docs/protocol.md, "Artifacts") on the host, equal to what collectLocalArtifacts gives
 * for the same tree there, with `remote: true`. Paths are relative to the cwd, sorted; at most
 * `MAX_ENTRIES_PER_DECLARATION` files per declaration, and listings cut after `MAX_SCAN_PER_DECLARATION` rows.
 */
export async function collectRemoteArtifacts(
  host: ScriptRunner,
  cwd: string,
  declared: readonly string[],
  maxInlineBytes: number,
  opts: RemoteCollectOptions = {},
): Promise<ArtifactEntry[]> {
  if (declared.length === 0) return [];
  const limit = opts.maxEntriesPerDeclaration ?? MAX_ENTRIES_PER_DECLARATION;
  const listCap = opts.maxListedPerDeclaration ?? MAX_SCAN_PER_DECLARATION;
  const slots: Slot[] = [];
  const asked: string[] = [];
  const args: string[] = [];
  for (const d of declared) {
    const plan = planDeclaration(d);
    if (plan.kind === "refused") {
      slots.push(absentArtifact(plan.path, d, plan.reason, true));
      continue;
    }
    const path = plan.kind === "relative" ? plan.rel : plan.abs;
    const prefix = hasGlobSyntax(d) ? globStaticPrefix(path) : "";
    const bounds = prefix ? listingBounds(path, prefix) : { depth: "", dots: true };
    asked.push(d);
    args.push(path, prefix, bounds.depth, bounds.dots ? "1" : "0");
  }
  if (asked.length > 0) {
    const r = await host.run(ARTIFACTS, [cwd, String(listCap + 1), ...args]);
    const report = parseListReport(r.stdout.toString("utf8"));
    if ("error" in report) {
      const why = ArtifactReason.cwdUnreadable(cwd, report.error);
      return declared.map((d) => absentArtifact(d, d, why, true)).sort(compareArtifacts);
    }
    if (report.declarations.length !== asked.length) {
      throw new Error(
        `the artifact listing covers ${report.declarations.length} of ${asked.length} declarations${r.stderr.length ? `: ${r.stderr.toString("utf8").trim().slice(0, 500)}` : ""}`,
      );
    }
    const ctx: ListContext = { base: report.base, limit, listCap };
    for (const [i, d] of asked.entries()) {
      slots.push(...planEntries(ctx, d, report.declarations[i] as DeclarationReport));
    }
  }
  const pending = slots.filter((s): s is Pending => !("path" in s));
  const index = new Map<string, number>();
  const fileArgs: string[] = [];
  for (const p of pending) {
    const key = `${p.json ? "j" : "-"}${p.real}`;
    if (index.has(key)) continue;
    index.set(key, index.size);
    fileArgs.push(p.json ? "j" : "-", p.real);
  }
  let reports: FileReport[] = [];
  if (index.size > 0) {
    const r = await host.run(ARTIFACT_FILES, [String(maxInlineBytes), ...fileArgs]);
    reports = parseFilesReport(r.stdout.toString("utf8"), index.size);
  }
  return slots
    .map((s) => {
      if ("path" in s) return s;
      const report = reports[index.get(`${s.json ? "j" : "-"}${s.real}`) as number] ?? { status: "gone" };
      return describeFile(s, report, maxInlineBytes, opts.redactor);
    })
    .sort(compareArtifacts);
}
