// known_hosts as OpenSSH reads it: plain, wildcard, negated, `[host]:port` and hashed `|1|` entries,
// `@revoked` and `@cert-authority` markers; verdicts for a presented host key, and adding a key.

import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { matchGlob } from "./ssh-config-syntax.ts";

export interface KnownHostEntry {
  file: string;
  line: number;
  marker?: "revoked" | "cert-authority";
  /** The host field as written: a comma list of patterns, or one `|1|salt|hash`. */
  hosts: string;
  keyType: string;
  keyBase64: string;
}

export interface HostKeyQuery {
  host: string;
  port: number;
  keyType: string;
  keyBase64: string;
}

export type HostKeyStatus = "match" | "mismatch" | "revoked" | "unknown";

export interface HostKeyCheck {
  status: HostKeyStatus;
  /** The deciding entry: the matching, the differing (mismatch) or the revoking line. */
  file?: string;
  line?: number;
  /** The key type of the deciding entry. */
  keyType?: string;
}

// The name OpenSSH looks up: the host alone on port 22, `[host]:port` otherwise.
export function knownHostName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const fields = (lines[i] ?? "").trim().split(/\s+/);
    if (fields[0] === undefined || fields[0] === "" || fields[0].startsWith("#")) continue;
    let marker: KnownHostEntry["marker"];
    if (fields[0].startsWith("@")) {
      const name = fields.shift();
      if (name !== "@revoked" && name !== "@cert-authority") continue; // unknown marker: OpenSSH skips the line
      marker = name === "@revoked" ? "revoked" : "cert-authority";
    }
    const [hosts, keyType, keyBase64] = fields;
    if (hosts === undefined || keyType === undefined || keyBase64 === undefined) continue; // malformed
    const entry: KnownHostEntry = { file, line: i + 1, hosts, keyType, keyBase64 };
    if (marker !== undefined) entry.marker = marker;
    entries.push(entry);
  }
  return entries;
}

// OpenSSH's match_hostname over one host field: a hashed entry, or comma-separated patterns where any
// matching `!pattern` excludes the host and otherwise some positive pattern must match (case-insensitive).
export function hostFieldMatches(name: string, hosts: string): boolean {
  const lower = name.toLowerCase();
  if (hosts.startsWith("|1|")) return hashedMatches(lower, hosts);
  let positive = false;
  for (const raw of hosts.toLowerCase().split(",")) {
    const negated = raw.startsWith("!");
    if (!matchGlob(lower, negated ? raw.slice(1) : raw)) continue;
    if (negated) return false;
    positive = true;
  }
  return positive;
}

// `|1|base64(salt)|base64(HMAC-SHA1(key = salt, data = name))`.
function hashedMatches(name: string, hosts: string): boolean {
  const [, , salt, hash] = hosts.split("|");
  if (salt === undefined || hash === undefined) return false;
  const want = Buffer.from(hash, "base64");
  const got = createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest();
  return want.length === got.length && timingSafeEqual(want, got);
}

export function hashHostName(name: string, salt: Buffer = randomBytes(20)): string {
  const hash = createHmac("sha1", salt).update(name).digest();
  return `|1|${salt.toString("base64")}|${hash.toString("base64")}`;
}

function sameKey(entry: KnownHostEntry, keyType: string, keyBase64: string): boolean {
  return (
    entry.keyType === keyType &&
    Buffer.from(entry.keyBase64, "base64").equals(Buffer.from(keyBase64, "base64"))
  );
}

function readEntries(files: string[], readFile: (path: string) => string | undefined): KnownHostEntry[] {
  return files.flatMap((file) => {
    const text = readFile(file);
    return text === undefined ? [] : parseKnownHosts(text, file);
  });
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

function verdictFor(name: string, q: HostKeyQuery, entries: KnownHostEntry[]): HostKeyCheck {
  const forHost = entries.filter((e) => e.marker !== "cert-authority" && hostFieldMatches(name, e.hosts));
  const at = (e: KnownHostEntry, status: HostKeyStatus): HostKeyCheck => ({
    status,
    file: e.file,
    line: e.line,
    keyType: e.keyType,
  });
  const revoked = forHost.find((e) => e.marker === "revoked" && sameKey(e, q.keyType, q.keyBase64));
  if (revoked !== undefined) return at(revoked, "revoked");
  const plain = forHost.filter((e) => e.marker === undefined);
  const match = plain.find((e) => sameKey(e, q.keyType, q.keyBase64));
  if (match !== undefined) return at(match, "match");
  // As OpenSSH's check_hostkeys_by_key_or_type: any other key known for the host, of any type, is a change
  // (a MITM offering only a type the file lacks must not pass as "new").
  const differs = plain.find((e) => e.keyType === q.keyType) ?? plain[0];
  if (differs !== undefined) return at(differs, "mismatch");
  return { status: "unknown" };
}

/**
 * Verdict for a presented host key against known_hosts files (missing files count as empty).
 * A key of another type than the ones known for the host is a "mismatch", as in OpenSSH. For a
 * non-22 port with no `[host]:port` entry, a plain `host` entry with the same key counts as a
 * match (OpenSSH: "found matching key w/out port").
 */
export function checkHostKey(
  q: HostKeyQuery,
  files: string[],
  readFile: (path: string) => string | undefined = readIfExists,
): HostKeyCheck {
  const entries = readEntries(files, readFile);
  const verdict = verdictFor(knownHostName(q.host, q.port), q, entries);
  if (verdict.status !== "unknown" || q.port === 22) return verdict;
  const portless = verdictFor(knownHostName(q.host, 22), q, entries);
  return portless.status === "match" || portless.status === "revoked" ? portless : verdict;
}

/** Key types known for a host (to offer those algorithms first, as OpenSSH does). */
export function knownKeyTypes(
  host: string,
  port: number,
  files: string[],
  readFile: (path: string) => string | undefined = readIfExists,
): string[] {
  const names =
    port === 22 ? [knownHostName(host, 22)] : [knownHostName(host, port), knownHostName(host, 22)];
  const types = readEntries(files, readFile)
    .filter((e) => e.marker === undefined && names.some((n) => hostFieldMatches(n, e.hosts)))
    .map((e) => e.keyType);
  return [...new Set(types)];
}

/** One word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_.,:@%+=/-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

// ssh-keyscan's -t names for known_hosts key types.
const KEYSCAN_TYPES: Record<string, string> = {
  "ssh-ed25519": "ed25519",
  "ssh-rsa": "rsa",
  "ssh-dss": "dsa",
  "ecdsa-sha2-nistp256": "ecdsa",
  "ecdsa-sha2-nistp384": "ecdsa",
  "ecdsa-sha2-nistp521": "ecdsa",
  "sk-ssh-ed25519@openssh.com": "ed25519-sk",
  "sk-ecdsa-sha2-nistp256@openssh.com": "ecdsa-sk",
};

/** The command that prints the fingerprint of a host's key of one type, to compare with the one its administrator publishes. */
export function formatFingerprintCommand(host: string, port: number, keyType: string): string {
  const portArg = port === 22 ? "" : `-p ${port} `;
  const type = KEYSCAN_TYPES[keyType];
  const typeArg = type === undefined ? "" : `-t ${type} `;
  return `ssh-keyscan ${typeArg}${portArg}${shellWord(host)} | ssh-keygen -lf -`;
}

/** The interactive alternative: connect once with OpenSSH, compare the fingerprint, answer yes. */
export function formatConnectOnceCommand(host: string, port: number, user?: string): string {
  const portArg = port === 22 ? "" : `-p ${port} `;
  return `ssh ${portArg}${shellWord(user === undefined ? host : `${user}@${host}`)} true`;
}

/** Appends a key (for StrictHostKeyChecking accept-new); creates the file (0600) and its directory (0700). */
export function appendKnownHost(
  file: string,
  host: string,
  port: number,
  keyType: string,
  keyBase64: string,
  opts: { hashed?: boolean } = {},
): string {
  const name = knownHostName(host, port);
  const line = `${opts.hashed === true ? hashHostName(name) : name} ${keyType} ${keyBase64}\n`;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const existing = existsSync(file) ? readFileSync(file, "utf8") : "";
  const sep = existing === "" || existing.endsWith("\n") ? "" : "\n";
  appendFileSync(file, sep + line, { mode: 0o600 });
  return line;
}

/** Key type and base64 of a wire-format public key blob (what ssh2's hostVerifier receives). */
export function hostKeyFromBlob(blob: Buffer): { keyType: string; keyBase64: string } {
  const len = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  return { keyType: blob.subarray(4, 4 + len).toString("latin1"), keyBase64: blob.toString("base64") };
}
