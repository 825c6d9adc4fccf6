// Which credentials to offer, in OpenSSH's order: the agent (if its socket exists), then readable key files.
// Encrypted key files are never decrypted (nothing may prompt): they are skipped and named in the error.
// With IdentitiesOnly yes the agent may offer only the identity files' own keys (an encrypted file's key is used
// through the agent when the agent holds it); their public halves are worked out here, without ssh2.
import { readFileSync, statSync } from "node:fs";
import type { IdentityAgent } from "./ssh-config.ts";

export type ParsedKeyResult =
  /** `publicKey`: the key's public blob in SSH wire format, when the parser knows it. */
  | { kind: "ok"; key: unknown; publicKey?: Buffer }
  | { kind: "encrypted" }
  | { kind: "invalid"; message: string };

export interface AuthPlan {
  /** The agent to offer, or null. */
  agentSocket: string | null;
  /** IdentitiesOnly yes: the agent may offer only keys with these public blobs (the identity files'); null: all. */
  agentKeys: Buffer[] | null;
  /** IdentitiesOnly yes: an agent socket left out because no identity file's public key is known. */
  agentUnused: string | null;
  keys: { path: string; key: unknown }[];
  /** Key files that exist but need a passphrase. */
  encrypted: string[];
  /** IdentitiesOnly yes: encrypted key files whose public key is unknown (no .pub, not OpenSSH's format). */
  noPublicKey: string[];
  /** Key files that exist but could not be read or parsed, with why. */
  unusable: string[];
}

/** The agent socket to use, or null (unset, `IdentityAgent none`, or no socket at that path: ssh2 would abort the connection). */
export function agentSocketFor(agent: IdentityAgent, env: Record<string, string | undefined>): string | null {
  const path = agent.kind === "none" ? undefined : agent.kind === "env" ? env.SSH_AUTH_SOCK : agent.path;
  if (path === undefined || path === "") return null;
  try {
    return statSync(path).isSocket() ? path : null;
  } catch {
    return null;
  }
}

// Reads an SSH wire string (uint32 length + bytes) at `at`; null when it runs past the end.
function wireString(buf: Buffer, at: number): { value: Buffer; next: number } | null {
  if (at + 4 > buf.length) return null;
  const len = buf.readUInt32BE(at);
  const end = at + 4 + len;
  if (end > buf.length) return null;
  return { value: buf.subarray(at + 4, end), next: end };
}

/** The public key blob of a `.pub` file (`type base64 [comment]`, the first key line), or null. */
export function publicKeyFromPubFile(text: string): Buffer | null {
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [type, b64] = line.split(/\s+/);
    if (type === undefined || b64 === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
    const blob = Buffer.from(b64, "base64");
    // The blob names its own type first; it must agree with the line.
    return wireString(blob, 0)?.value.toString("latin1") === type ? blob : null;
  }
  return null;
}

/**
 * The public key blob stored in clear in an OpenSSH-format private key file (encrypted or not), as OpenSSH reads it
 * when no .pub exists; null for other formats (PEM, PKCS#8) or more than one key.
 */
export function publicKeyFromOpensshKeyFile(data: Buffer): Buffer | null {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END OPENSSH PRIVATE KEY-----/.exec(
    data.toString("latin1"),
  );
  if (!m?.[1]) return null;
  const buf = Buffer.from(m[1].replace(/\s+/g, ""), "base64");
  const magic = Buffer.from("openssh-key-v1\0", "latin1");
  if (buf.length < magic.length || !buf.subarray(0, magic.length).equals(magic)) return null;
  let at = magic.length;
  for (let i = 0; i < 3; i++) {
    const s = wireString(buf, at); // cipher name, KDF name, KDF options
    if (!s) return null;
    at = s.next;
  }
  if (at + 4 > buf.length || buf.readUInt32BE(at) !== 1) return null;
  const pub = wireString(buf, at + 4)?.value;
  return pub && pub.length > 0 ? Buffer.from(pub) : null;
}

function readPubFile(path: string): Buffer | null {
  try {
    return publicKeyFromPubFile(readFileSync(path, "utf8"));
  } catch {
    return null; // no readable .pub
  }
}

// An identity file's public key: the parsed key's, else the .pub next to it, else the clear part of OpenSSH's format.
function identityPublicKey(path: string, data: Buffer, parsed: ParsedKeyResult): Buffer | null {
  if (parsed.kind === "ok" && parsed.publicKey) return parsed.publicKey;
  return readPubFile(`${path}.pub`) ?? publicKeyFromOpensshKeyFile(data);
}

export function planAuth(
  identityFiles: string[],
  agentSocket: string | null,
  parseKey: (data: Buffer) => ParsedKeyResult,
  identitiesOnly = false,
): AuthPlan {
  const plan: AuthPlan = {
    agentSocket,
    agentKeys: identitiesOnly ? [] : null,
    agentUnused: null,
    keys: [],
    encrypted: [],
    noPublicKey: [],
    unusable: [],
  };
  const allowAgentKey = (pub: Buffer) => {
    if (plan.agentKeys && !plan.agentKeys.some((k) => k.equals(pub))) plan.agentKeys.push(pub);
  };
  for (const path of identityFiles) {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") plan.unusable.push(`${path} (${(e as Error).message})`);
      // The private half lives only in the agent (a hardware token, a password manager): OpenSSH then uses the
      // agent's key matching <file>.pub.
      else if (plan.agentKeys) {
        const pub = readPubFile(`${path}.pub`);
        if (pub) allowAgentKey(pub);
      }
      continue;
    }
    // An IdentityFile that is itself a public key (`IdentityFile ~/.ssh/key.pub`, as agent-backed setups write it)
    // names the agent's key to use; it is never offered as a key file.
    const publicOnly = publicKeyFromPubFile(data.toString("utf8"));
    if (publicOnly) {
      allowAgentKey(publicOnly);
      continue;
    }
    const parsed = parseKey(data);
    if (parsed.kind === "ok") plan.keys.push({ path, key: parsed.key });
    else if (parsed.kind === "encrypted") plan.encrypted.push(path);
    else {
      plan.unusable.push(`${path} (${parsed.message})`);
      continue;
    }
    // An unencrypted key file is offered from the file itself: through the agent as well it would be offered
    // twice and use two of the server's MaxAuthTries (OpenSSH offers each key once). Only encrypted files need it.
    if (plan.agentKeys && parsed.kind === "encrypted") {
      const pub = identityPublicKey(path, data, parsed);
      if (pub) allowAgentKey(pub);
      else plan.noPublicKey.push(path);
    }
  }
  // IdentitiesOnly yes and no encrypted identity file's key is known: the agent would have nothing to offer.
  // Worth saying only when an encrypted file could not be matched (its public key is unknown).
  if (plan.agentKeys?.length === 0 && agentSocket) {
    plan.agentSocket = null;
    if (plan.noPublicKey.length > 0) plan.agentUnused = agentSocket;
  }
  return plan;
}

/** The agent keys that may be offered: all (`allowed` null), or those whose public blob is one of `allowed`. */
export function allowedAgentKeys<K>(
  keys: K[],
  blobOf: (key: K) => Buffer | null,
  allowed: Buffer[] | null,
): K[] {
  if (allowed === null) return keys;
  return keys.filter((k) => {
    const blob = blobOf(k);
    return blob !== null && allowed.some((a) => a.equals(blob));
  });
}

/**
 * What an authentication failure says: what was tried, and the next step. `tooManyFailures`: the server ended the
 * connection after MaxAuthTries rejected keys ("Too many authentication failures").
 */
export function authFailure(
  user: string,
  host: string,
  plan: AuthPlan,
  opts: { tooManyFailures?: boolean } = {},
): { message: string; hint: string } {
  const onlyIdentities = plan.agentKeys !== null;
  const tried = [
    ...(plan.agentSocket
      ? [
          `the agent at ${plan.agentSocket}${onlyIdentities ? " (only keys of IdentityFile, IdentitiesOnly yes)" : ""}`,
        ]
      : []),
    ...plan.keys.map((k) => k.path),
  ];
  let message =
    `authentication as ${user}@${host} failed` +
    (opts.tooManyFailures
      ? ": the server closed the connection after too many authentication failures"
      : "") +
    (tried.length > 0 ? ` (tried ${tried.join(", ")})` : " (no agent and no usable key file)");
  if (plan.agentUnused) {
    message += `; the agent at ${plan.agentUnused} was not used: IdentitiesOnly yes and no IdentityFile's public key is known`;
  }
  if (plan.encrypted.length > 0) {
    message += `; the key ${plan.encrypted.join(", ")} is encrypted and awaitless never asks for passphrases`;
  }
  if (plan.unusable.length > 0) message += `; unusable key files: ${plan.unusable.join(", ")}`;
  const [noPub] = plan.noPublicKey;
  if (noPub !== undefined) {
    return {
      message: `${message}; with IdentitiesOnly yes the agent may use ${noPub} only when its public key is known, and there is no ${noPub}.pub`,
      hint: `write its public key next to it (ssh-keygen -y -f ${noPub} > ${noPub}.pub), add the key to your ssh-agent (ssh-add ${noPub}) and make sure SSH_AUTH_SOCK is set where awaitless runs`,
    };
  }
  if (opts.tooManyFailures && !onlyIdentities) {
    return {
      message,
      hint: `the agent offers more keys than the server's MaxAuthTries allows; set IdentitiesOnly yes and the right IdentityFile for ${host} in ~/.ssh/config so that only its key is offered`,
    };
  }
  if (plan.encrypted.length > 0) {
    return {
      message,
      hint: `add it to your ssh-agent once (ssh-add ${plan.encrypted[0]}) and make sure SSH_AUTH_SOCK is set where awaitless runs`,
    };
  }
  return {
    message,
    hint: `check that \`ssh ${user}@${host} true\` works, that the key is in the remote ~/.ssh/authorized_keys, and IdentityFile in ~/.ssh/config`,
  };
}
