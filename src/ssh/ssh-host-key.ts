// Host-key policy for ssh2's hostVerifier: OpenSSH's verdicts from known_hosts, accept-new, and the refusal messages.
import { createHash } from "node:crypto";
import {
  appendKnownHost,
  checkHostKey,
  formatConnectOnceCommand,
  formatFingerprintCommand,
  hostKeyFromBlob,
  knownKeyTypes,
} from "./known-hosts.ts";
import type { StrictHostKeyChecking } from "./ssh-config.ts";

export interface HostKeyPolicy {
  /** The name looked up in known_hosts (HostKeyAlias, else the host name). */
  host: string;
  port: number;
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  strict: StrictHostKeyChecking;
  /** HashKnownHosts: write added entries as `|1|salt|hash`. */
  hashKnownHosts?: boolean;
  /** The OpenSSH command that reaches this same host as this user (`ssh ALIAS true`), for the hints. */
  connectOnce?: string;
}

export interface HostKeyDecision {
  accept: boolean;
  /** Why the key was refused (ssh2 itself only says "Host denied"), with what to do. */
  refusal?: { message: string; hint: string };
}

/** OpenSSH's fingerprint form: SHA256: and unpadded base64 of the key blob. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

function bracketed(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function decideHostKey(p: HostKeyPolicy, blob: Buffer): HostKeyDecision {
  const key = hostKeyFromBlob(blob);
  const files = [...p.userKnownHostsFiles, ...p.globalKnownHostsFiles];
  const verdict = checkHostKey({ host: p.host, port: p.port, ...key }, files);
  const name = bracketed(p.host, p.port);
  const fp = `${key.keyType} ${fingerprint(blob)}`;
  if (verdict.status === "match") return { accept: true };
  if (verdict.status === "revoked") {
    return {
      accept: false,
      refusal: {
        message: `the host key of ${name} (${fp}) is marked @revoked in ${verdict.file}:${verdict.line}`,
        hint: "do not connect: ask the host's administrator for its current key",
      },
    };
  }
  if (verdict.status === "mismatch") {
    return {
      accept: false,
      refusal: {
        message:
          `REMOTE HOST IDENTIFICATION HAS CHANGED for ${name}: it presented ${fp}, ` +
          `but ${verdict.file}:${verdict.line} holds a different ${verdict.keyType ?? key.keyType} key. Someone may be intercepting ` +
          "the connection, or the host was reinstalled",
        hint:
          `do not connect until the host's administrator confirms the new key ${fingerprint(blob)}; ` +
          `if so, remove the old entry (ssh-keygen -R '${name}' -f ${verdict.file}) and connect once with ` +
          `${p.connectOnce ?? formatConnectOnceCommand(p.host, p.port)}, which shows the fingerprint and asks`,
      },
    };
  }
  // Unknown: OpenSSH adds the key only under accept-new (and no); yes and ask (no tty here) refuse.
  const target = p.userKnownHostsFiles[0];
  if ((p.strict === "accept-new" || p.strict === "no") && target !== undefined) {
    appendKnownHost(target, p.host, p.port, key.keyType, key.keyBase64, {
      hashed: p.hashKnownHosts === true,
    });
    return { accept: true };
  }
  return {
    accept: false,
    refusal: {
      message: `the host key of ${name} is not known (it presented ${fp}; looked in ${files.join(", ") || "no known_hosts file"})`,
      hint:
        `check the key before trusting it: connect once with ${p.connectOnce ?? formatConnectOnceCommand(p.host, p.port)}, which shows ` +
        `the fingerprint and asks, after comparing it with the one the host's administrator publishes ` +
        `(${formatFingerprintCommand(p.host, p.port, key.keyType)} prints it); ` +
        "or set StrictHostKeyChecking accept-new for this host in ~/.ssh/config to trust the first key seen",
    },
  };
}

// Host-key algorithm names ssh2 negotiates, per known_hosts key type (RSA keys sign with SHA-2 first).
const ALGORITHMS_BY_KEY_TYPE: Record<string, string[]> = {
  "ssh-ed25519": ["ssh-ed25519"],
  "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
  "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
  "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
  "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
};
const DEFAULT_ORDER = Object.values(ALGORITHMS_BY_KEY_TYPE).flat();

/** Host-key algorithms with the ones known_hosts has keys for first (as OpenSSH orders them), so the server presents one we can check. */
export function hostKeyAlgorithms(p: HostKeyPolicy): string[] {
  const known = knownKeyTypes(p.host, p.port, [...p.userKnownHostsFiles, ...p.globalKnownHostsFiles]);
  const first = known.flatMap((t) => ALGORITHMS_BY_KEY_TYPE[t] ?? []);
  return [...new Set([...first, ...DEFAULT_ORDER])];
}
