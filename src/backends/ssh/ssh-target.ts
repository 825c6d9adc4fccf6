// Turns a host name into connection settings: a [hosts.NAME] entry in our config over ~/.ssh/config resolution.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/model/errors.ts";
import { shellWord } from "../../ssh/known-hosts.ts";
import { DEFAULT_PERSIST_SECONDS, type OpensshTarget } from "../../ssh/openssh-command.ts";
import { agentSocketFor } from "../../ssh/ssh-auth.ts";
import {
  localSshContext,
  type ResolvedSshHost,
  type ResolveSshHostOptions,
  resolveSshHost,
} from "../../ssh/ssh-config.ts";
import type { SessionTarget } from "../../ssh/ssh-session.ts";

interface CommonSettings {
  name: string;
  /** As configured (default ~/.awaitless); `~` is the remote home, expanded on the host. */
  remoteJobDir: string;
  operationTimeoutMs: number;
  /** The ssh config files that were read, or are passed to `ssh -F` (doctor). */
  configFiles: string[];
}

/** The built-in client (ssh2, our resolver) or the system OpenSSH client (its own resolution via `ssh -G`). */
export type SshHostSettings = CommonSettings &
  ({ transport: "ssh2"; target: SessionTarget } | { transport: "openssh"; openssh: OpensshTarget });

export const DEFAULT_REMOTE_JOB_DIR = "~/.awaitless";
export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
export const DEFAULT_OPERATION_TIMEOUT_MS = 60_000;
/** Keepalive when ~/.ssh/config sets none: a dead peer is noticed within about interval × (count + 1). */
export const DEFAULT_KEEPALIVE_INTERVAL_MS = 5_000;

type Ctx = Pick<ResolveSshHostOptions, "home" | "user" | "env"> & Partial<ResolveSshHostOptions>;

function expandHome(path: string, home: string): string {
  return path === "~" ? home : path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
}

function targetFrom(
  label: string,
  r: ResolvedSshHost,
  entry: HostConfig | undefined,
  ctx: Ctx,
): SessionTarget {
  const port = entry?.port ?? r.port;
  const host = r.hostName;
  const identityFiles = entry?.identity_file
    ? [expandHome(entry.identity_file, ctx.home), ...(r.identityFilesConfigured ? r.identityFiles : [])]
    : r.identityFiles;
  return {
    label,
    host,
    port,
    user: entry?.user ?? r.user,
    identityFiles: [...new Set(identityFiles)],
    agentSocket: agentSocketFor(r.identityAgent, ctx.env ?? process.env),
    identitiesOnly: r.identitiesOnly,
    hostKey: {
      host: r.hostKeyAlias ?? host,
      port,
      userKnownHostsFiles: r.userKnownHostsFiles,
      globalKnownHostsFiles: r.globalKnownHostsFiles,
      strict: r.strictHostKeyChecking,
      hashKnownHosts: r.hashKnownHosts,
      connectOnce: connectOnceCommand(label, entry, ctx.home),
    },
    connectTimeoutMs:
      entry?.connect_timeout !== undefined
        ? entry.connect_timeout * 1000
        : (r.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS),
    keepaliveIntervalMs:
      r.serverAliveIntervalMs > 0 ? r.serverAliveIntervalMs : DEFAULT_KEEPALIVE_INTERVAL_MS,
    keepaliveCountMax: r.serverAliveCountMax,
  };
}

/**
 * The OpenSSH command that reaches what `name` reaches, as the same user: `ssh NAME true` for an ~/.ssh/config alias
 * (OpenSSH reads the same User, Port and keys), with a [hosts.NAME] table's own hostname, port, user and key added.
 */
function connectOnceCommand(name: string, entry: HostConfig | undefined, home: string): string {
  const words = ["ssh"];
  if (entry?.port !== undefined) words.push("-p", String(entry.port));
  if (entry?.user !== undefined) words.push("-l", entry.user);
  if (entry?.identity_file !== undefined) words.push("-i", expandHome(entry.identity_file, home));
  words.push(entry?.hostname ?? name, "true");
  return words.map(shellWord).join(" ");
}

/** Settings for `name`; throws config_invalid (naming the file and line) for what cannot be honoured. */
export function resolveHostSettings(
  name: string,
  hosts: Record<string, HostConfig>,
  ctx: Ctx = localSshContext(),
): SshHostSettings {
  const entry = hosts[name];
  if (entry?.transport === "openssh") return opensshSettings(name, entry, ctx);
  const alias = entry?.hostname ?? name;
  const r = resolveSshHost(alias, ctx);
  const target = targetFrom(name, r, entry, ctx);
  if (r.proxyJump) {
    const j = resolveSshHost(r.proxyJump.host, ctx);
    if (j.proxyJump) {
      throw new AwaitlessError(
        "config_invalid",
        `${name} jumps through ${r.proxyJump.host}, which itself has a ProxyJump (${j.proxyJump.host}): only one hop is supported`,
        `connect to ${j.proxyJump.host} from a host that reaches ${r.proxyJump.host} directly, or use transport = "openssh" for ${name}`,
      );
    }
    const jt = targetFrom(r.proxyJump.host, j, undefined, ctx);
    if (r.proxyJump.user) jt.user = r.proxyJump.user;
    if (r.proxyJump.port) {
      jt.port = r.proxyJump.port;
      jt.hostKey.port = r.proxyJump.port;
    }
    target.jump = jt;
  }
  return {
    name,
    target,
    remoteJobDir: entry?.remote_job_dir ?? DEFAULT_REMOTE_JOB_DIR,
    operationTimeoutMs:
      entry?.operation_timeout !== undefined ? entry.operation_timeout * 1000 : DEFAULT_OPERATION_TIMEOUT_MS,
    transport: "ssh2",
    configFiles: r.configFiles,
  };
}

// The passwd home of this user (Bun's userInfo() reports $HOME instead).
function passwdHome(): string | undefined {
  const uid = String(process.getuid?.() ?? "");
  try {
    const line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === uid);
    return line?.split(":")[5] || undefined;
  } catch {
    return undefined;
  }
}

/**
 * transport = "openssh": `ssh` resolves the destination itself (Match, ProxyCommand and all). [hosts.NAME] fields
 * become options; like the built-in client, ~/.ssh/config means $HOME's, passed with -F when $HOME is not the
 * passwd home (ssh alone would read the passwd home's).
 */
function opensshSettings(name: string, entry: HostConfig, ctx: Ctx): SshHostSettings {
  const args: string[] = [];
  const configFiles: string[] = [];
  const own = join(ctx.home, ".ssh", "config");
  const pw = passwdHome();
  if (pw !== undefined && pw !== ctx.home && existsSync(own)) {
    args.push("-F", own);
    configFiles.push(own);
  }
  if (entry.port !== undefined) args.push("-p", String(entry.port));
  if (entry.user !== undefined) args.push("-l", entry.user);
  if (entry.identity_file !== undefined) args.push("-i", expandHome(entry.identity_file, ctx.home));
  if (entry.connect_timeout !== undefined) args.push("-o", `ConnectTimeout=${entry.connect_timeout}`);
  if (entry.gssapi_authentication !== undefined)
    args.push("-o", `GSSAPIAuthentication=${entry.gssapi_authentication ? "yes" : "no"}`);
  const operationTimeoutMs =
    entry.operation_timeout !== undefined ? entry.operation_timeout * 1000 : DEFAULT_OPERATION_TIMEOUT_MS;
  return {
    name,
    transport: "openssh",
    openssh: {
      label: name,
      destination: entry.hostname ?? name,
      args,
      connectTimeoutMs:
        entry.connect_timeout !== undefined ? entry.connect_timeout * 1000 : DEFAULT_CONNECT_TIMEOUT_MS,
      operationTimeoutMs,
      persistSeconds: DEFAULT_PERSIST_SECONDS,
    },
    remoteJobDir: entry.remote_job_dir ?? DEFAULT_REMOTE_JOB_DIR,
    operationTimeoutMs,
    configFiles,
  };
}
