// Which credentials to offer, in OpenSSH's order: the agent (if its socket exists), then readable key files.
// Encrypted key files are never decrypted (nothing may prompt): they are skipped and named in the error.
import { readFileSync, statSync } from "node:fs";
import type { IdentityAgent } from "./ssh-config.ts";

export type ParsedKeyResult =
  | { kind: "ok"; key: unknown }
  | { kind: "encrypted" }
  | { kind: "invalid"; message: string };

export interface AuthPlan {
  agentSocket: string | null;
  keys: { path: string; key: unknown }[];
  /** Key files that exist but need a passphrase. */
  encrypted: string[];
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

export function planAuth(
  identityFiles: string[],
  agentSocket: string | null,
  parseKey: (data: Buffer) => ParsedKeyResult,
): AuthPlan {
  const plan: AuthPlan = { agentSocket, keys: [], encrypted: [], unusable: [] };
  for (const path of identityFiles) {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") plan.unusable.push(`${path} (${(e as Error).message})`);
      continue;
    }
    const parsed = parseKey(data);
    if (parsed.kind === "ok") plan.keys.push({ path, key: parsed.key });
    else if (parsed.kind === "encrypted") plan.encrypted.push(path);
    else plan.unusable.push(`${path} (${parsed.message})`);
  }
  return plan;
}

/** What an authentication failure says: what was tried, and the next step. */
export function authFailure(user: string, host: string, plan: AuthPlan): { message: string; hint: string } {
  const tried = [
    ...(plan.agentSocket ? [`the agent at ${plan.agentSocket}`] : []),
    ...plan.keys.map((k) => k.path),
  ];
  const message =
    `authentication as ${user}@${host} failed` +
    (tried.length > 0 ? ` (tried ${tried.join(", ")})` : " (no agent and no usable key file)");
  if (plan.encrypted.length > 0) {
    return {
      message: `${message}; the key ${plan.encrypted.join(", ")} is encrypted and awaitless never asks for passphrases`,
      hint: `add it to your ssh-agent once (ssh-add ${plan.encrypted[0]}) and make sure SSH_AUTH_SOCK is set where awaitless runs`,
    };
  }
  const unusable = plan.unusable.length > 0 ? `; unusable key files: ${plan.unusable.join(", ")}` : "";
  return {
    message: message + unusable,
    hint: `check that \`ssh ${user}@${host} true\` works, that the key is in the remote ~/.ssh/authorized_keys, and IdentityFile in ~/.ssh/config`,
  };
}
