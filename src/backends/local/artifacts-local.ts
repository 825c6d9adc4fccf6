// Collects a job's declared artifacts on this machine: paths, directories and globs, confined to the job's cwd.
import { createReadStream, type Dirent } from "node:fs";
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ArtifactEntry } from "../../core/model/job.ts";
import {
  ArtifactReason,
  absentArtifact,
  compareArtifacts,
  hasGlobSyntax,
  isInsideDir,
  isJsonArtifactPath,
  MAX_ENTRIES_PER_DECLARATION,
  MAX_SCAN_PER_DECLARATION,
  parseArtifactContent,
  planDeclaration,
  redactJsonStrings,
  relativeToCwd,
  tooLargeToInline,
  truncationNote,
} from "../../core/results/artifacts.ts";
import { sha256Hex } from "../../core/results/canonical-json.ts";
import type { Redactor } from "../../core/util/redact.ts";

export { MAX_ENTRIES_PER_DECLARATION };

/** Glob matches examined before sorting; beyond this the listing is truncated without a full sort. */
const MAX_GLOB_SCAN = MAX_SCAN_PER_DECLARATION;
const HASH_CONCURRENCY = 8;

export interface CollectOptions {
  /** JSON files up to this size are parsed into `content`. */
  maxInlineBytes: number;
  /** When given, string values inside parsed JSON are redacted. */
  redactor?: Redactor;
  maxEntriesPerDeclaration?: number;
}

interface Root {
  dir: string;
  real: string;
  opts: CollectOptions;
  limit: number;
}

const OUTSIDE_SYMLINK = ArtifactReason.outsideSymlink;

const absent = (path: string, declared: string, reason: string): ArtifactEntry =>
  absentArtifact(path, declared, reason, false);

const errCode = (e: unknown): string => (e as NodeJS.ErrnoException)?.code ?? "";

/**
 * The manifest for `declared` (docs/protocol.md, "Artifacts"), sorted by path. Each declaration is a file, a
 * directory (its files, recursively, at most `MAX_ENTRIES_PER_DECLARATION`) or a glob (`*`, `**`, `?`,
 * `[...]`, no dot files, symbolic links not followed). Anything resolving outside `cwd` — through `..`,
 * an absolute path or a symbolic link (checked on real paths) — is reported `exists: false` and never read.
 */
export async function collectLocalArtifacts(
  cwd: string,
  declared: readonly string[],
  opts: CollectOptions,
): Promise<ArtifactEntry[]> {
  const dir = resolve(cwd);
  let real: string;
  try {
    real = await realpath(dir);
  } catch (e) {
    const why = ArtifactReason.cwdUnreadable(dir, errCode(e) || String(e));
    return declared.map((d) => absent(d, d, why)).sort(compareArtifacts);
  }
  const root: Root = { dir, real, opts, limit: opts.maxEntriesPerDeclaration ?? MAX_ENTRIES_PER_DECLARATION };
  const entries: ArtifactEntry[] = [];
  for (const d of declared) entries.push(...(await collectDeclaration(root, d)));
  return entries.sort(compareArtifacts);
}

async function collectDeclaration(root: Root, declared: string): Promise<ArtifactEntry[]> {
  const plan = planDeclaration(declared);
  if (plan.kind === "refused") return [absent(plan.path, declared, plan.reason)];
  const rel = plan.kind === "relative" ? plan.rel : relativeToCwd(root.dir, plan.abs);
  if (rel === null) return [absent(declared, declared, ArtifactReason.outsideAbsolute)];
  const literal = await lstat(join(root.dir, rel)).then(
    () => true,
    () => false,
  );
  // Lexical normalisation already removed every '..' that stays inside; the pattern is relative to cwd.
  if (!literal && hasGlobSyntax(declared)) return collectGlob(root, declared, rel);
  if (!literal) return [absent(rel, declared, ArtifactReason.noSuchPath)];
  return collectPath(root, declared, rel);
}

async function collectPath(root: Root, declared: string, rel: string): Promise<ArtifactEntry[]> {
  const abs = join(root.dir, rel);
  const real = await realpath(abs).catch(() => null);
  if (real === null) return [absent(rel, declared, ArtifactReason.brokenLink)];
  if (!isInsideDir(root.real, real)) return [absent(rel, declared, OUTSIDE_SYMLINK)];
  const st = await stat(real);
  if (!st.isDirectory()) return [await fileEntry(root, declared, rel)];
  const listing: Listing = { files: [], unlisted: [], limit: root.limit };
  const truncated = await walk(abs, rel === "." ? "" : rel, listing);
  const entries = await mapLimited(listing.files, (f) => fileEntry(root, declared, f));
  for (const u of listing.unlisted)
    entries.push(absent(`${u.rel}/`, declared, ArtifactReason.unlistable(u.code)));
  if (entries.length === 0) return [absent(rel, declared, ArtifactReason.emptyDirectory)];
  if (truncated) entries.push(truncationNote(`${rel}/`, declared, "directory holds", root.limit, false));
  return entries;
}

interface Listing {
  files: string[];
  unlisted: { rel: string; code: string }[];
  limit: number;
}

/** Depth-first with names sorted; collects up to `limit` candidate paths and says whether more were left. */
async function walk(absDir: string, relDir: string, listing: Listing): Promise<boolean> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(absDir, { withFileTypes: true });
  } catch (e) {
    listing.unlisted.push({ rel: relDir || ".", code: errCode(e) || String(e) });
    return false;
  }
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const dirent of dirents) {
    const rel = relDir ? `${relDir}/${dirent.name}` : dirent.name;
    if (dirent.isDirectory()) {
      if (await walk(join(absDir, dirent.name), rel, listing)) return true;
      continue;
    }
    if (listing.files.length >= listing.limit) return true;
    listing.files.push(rel);
  }
  return false;
}

async function collectGlob(root: Root, declared: string, pattern: string): Promise<ArtifactEntry[]> {
  const matches: string[] = [];
  let scanned = 0;
  for await (const match of new Bun.Glob(pattern).scan({
    cwd: root.dir,
    dot: false,
    followSymlinks: false,
    onlyFiles: false,
  })) {
    if (++scanned > MAX_GLOB_SCAN) break;
    matches.push(match);
  }
  matches.sort();
  const files: string[] = [];
  for (const match of matches) {
    // Real directories are containers, not artifacts; symbolic links are checked where they point.
    const st = await lstat(join(root.dir, match)).catch(() => null);
    if (st?.isDirectory()) continue;
    if (st?.isSymbolicLink()) {
      const target = await realpath(join(root.dir, match)).catch(() => null);
      if (target && isInsideDir(root.real, target) && (await stat(target)).isDirectory()) continue;
    }
    files.push(match);
  }
  if (files.length === 0) return [absent(declared, declared, ArtifactReason.noMatch)];
  const entries = await mapLimited(files.slice(0, root.limit), (f) => fileEntry(root, declared, f));
  if (files.length > root.limit || scanned > MAX_GLOB_SCAN) {
    entries.push(truncationNote(declared, declared, "pattern matches", root.limit, false));
  }
  return entries;
}

/** One file's manifest entry: confinement check on its real path, size, mtime, streamed SHA-256, inline JSON. */
async function fileEntry(root: Root, declared: string, rel: string): Promise<ArtifactEntry> {
  const abs = join(root.dir, rel);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (e) {
    return absent(
      rel,
      declared,
      errCode(e) === "ENOENT" ? ArtifactReason.brokenLink : ArtifactReason.unresolvable(errCode(e)),
    );
  }
  if (!isInsideDir(root.real, real)) return absent(rel, declared, OUTSIDE_SYMLINK);
  const st = await stat(real).catch(() => null);
  if (st === null) return absent(rel, declared, ArtifactReason.disappeared);
  if (!st.isFile()) return absent(rel, declared, ArtifactReason.notRegularFile);
  const entry: ArtifactEntry = {
    path: rel,
    declared_path: declared,
    exists: true,
    remote: false,
    size_bytes: st.size,
    modified_at: new Date(st.mtimeMs).toISOString(),
  };
  const { maxInlineBytes, redactor } = root.opts;
  try {
    if (isJsonArtifactPath(rel) && st.size <= maxInlineBytes) {
      const bytes = new Uint8Array(await readFile(real));
      entry.size_bytes = bytes.length;
      entry.sha256 = sha256Hex(bytes);
      const parsed = parseArtifactContent(rel, bytes, maxInlineBytes);
      if ("content" in parsed)
        entry.content = redactor ? redactJsonStrings(parsed.content, redactor) : parsed.content;
      if ("parse_error" in parsed) entry.parse_error = parsed.parse_error;
    } else {
      entry.sha256 = await hashFile(real);
      if (isJsonArtifactPath(rel)) entry.parse_error = tooLargeToInline(st.size, maxInlineBytes);
    }
  } catch (e) {
    entry.reason = ArtifactReason.unreadable(errCode(e) || String(e));
  }
  return entry;
}

async function hashFile(path: string): Promise<string> {
  const hash = new Bun.CryptoHasher("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Maps with at most HASH_CONCURRENCY files open at once, keeping input order. */
async function mapLimited<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, items.length) }, worker));
  return out;
}
