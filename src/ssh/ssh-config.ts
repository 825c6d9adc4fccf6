// Resolves an ssh alias through ~/.ssh/config (and /etc/ssh/ssh_config) with OpenSSH semantics, without
// running anything: the subset of keywords the ssh backend needs, defaults as `ssh -G` reports them.

import { readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { applyLines } from "./ssh-config-apply.ts";
import { expandPath, expandTokens, type TokenValues } from "./ssh-config-expand.ts";
import {
  activeLines,
  type GlobPaths,
  globFromDisk,
  type ReadConfigFile,
  type ReadContext,
  readConfigFileFromDisk,
} from "./ssh-config-read.ts";
import type { JumpHost, StrictHostKeyChecking } from "./ssh-config-syntax.ts";

export type { JumpHost };

import { type ConfigLocation, configError } from "./ssh-config-syntax.ts";

export type { GlobPaths, ReadConfigFile } from "./ssh-config-read.ts";
export type { StrictHostKeyChecking } from "./ssh-config-syntax.ts";

/** Which ssh-agent to use: the one in $SSH_AUTH_SOCK (OpenSSH's default), none, or a given socket. */
export type IdentityAgent = { kind: "env" } | { kind: "none" } | { kind: "socket"; path: string };

export interface ResolvedSshHost {
  /** The name asked for (%n). */
  alias: string;
  /** Where to connect: HostName with %h expanded, lowercased, or the alias. */
  hostName: string;
  user: string;
  port: number;
  /** Expanded paths, in the order to try; OpenSSH's default list when the config names none. */
  identityFiles: string[];
  /** True when identityFiles came from IdentityFile lines rather than the defaults. */
  identityFilesConfigured: boolean;
  identitiesOnly: boolean;
  identityAgent: IdentityAgent;
  proxyJump?: JumpHost;
  /** Absent: no timeout configured (OpenSSH "none"). */
  connectTimeoutMs?: number;
  /** 0 = keepalive off (OpenSSH default). */
  serverAliveIntervalMs: number;
  serverAliveCountMax: number;
  strictHostKeyChecking: StrictHostKeyChecking;
  /** Expanded; empty for `UserKnownHostsFile none`. */
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  /** Name to look up in known_hosts instead of the host name. */
  hostKeyAlias?: string;
  /** HashKnownHosts: entries added under accept-new are hashed. */
  hashKnownHosts: boolean;
  /** Config files that were read, in order. */
  configFiles: string[];
}

export interface ResolveSshHostOptions {
  /** Local home directory (~ and %d). */
  home: string;
  /** Local user name (%u and the default remote user). */
  user: string;
  readFile?: ReadConfigFile;
  glob?: GlobPaths;
  /** Like `ssh -F`: read only this file. Default: ~/.ssh/config, then the system file. */
  configFile?: string;
  /** Default /etc/ssh/ssh_config; only read when configFile is not given. */
  systemConfigFile?: string;
  /** For ${VAR} and `IdentityAgent $VAR`; default process.env. */
  env?: Record<string, string | undefined>;
  uid?: number;
  localHostName?: string;
}

/** The identity files `ssh -G` lists when none are configured (OpenSSH 9.2). */
export const DEFAULT_IDENTITY_FILES = [
  "id_rsa",
  "id_ecdsa",
  "id_ecdsa_sk",
  "id_ed25519",
  "id_ed25519_sk",
  "id_xmss",
  "id_dsa",
].map((name) => `~/.ssh/${name}`);
export const DEFAULT_USER_KNOWN_HOSTS_FILES = ["~/.ssh/known_hosts", "~/.ssh/known_hosts2"];
export const DEFAULT_GLOBAL_KNOWN_HOSTS_FILES = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];

export function resolveSshHost(alias: string, opts: ResolveSshHostOptions): ResolvedSshHost {
  const ctx: ReadContext = {
    alias,
    home: opts.home,
    readFile: opts.readFile ?? readConfigFileFromDisk,
    glob: opts.glob ?? globFromDisk,
    filesRead: [],
  };
  const lines =
    opts.configFile !== undefined
      ? activeLines(opts.configFile, true, ctx)
      : [
          ...activeLines(join(opts.home, ".ssh", "config"), true, ctx),
          ...activeLines(opts.systemConfigFile ?? "/etc/ssh/ssh_config", false, ctx),
        ];
  const s = applyLines(lines);
  const env = opts.env ?? process.env;

  const hostName = (
    s.hostName === undefined
      ? alias
      : expandTokens(s.hostName.value, tokensFor(alias, alias, 22, "", opts), "h", s.hostName.at, "HostName")
  ).toLowerCase();
  const port = s.port ?? 22;
  const user = s.user ?? opts.user;
  const tokens = tokensFor(hostName, alias, port, user, opts);

  const defaultAt: ConfigLocation = { file: "(default)", line: 0 };
  const identityFiles =
    s.identityFiles.length > 0
      ? s.identityFiles
      : DEFAULT_IDENTITY_FILES.map((value) => ({ value, at: defaultAt }));
  const knownHosts = s.userKnownHostsFiles ?? { values: DEFAULT_USER_KNOWN_HOSTS_FILES, at: defaultAt };
  const expand = (value: string, at: ConfigLocation, keyword: string) =>
    expandPath(value, tokens, env, at, keyword);

  const resolved: ResolvedSshHost = {
    alias,
    hostName,
    user,
    port,
    identityFiles: identityFiles
      .filter((f) => f.value.toLowerCase() !== "none")
      .map((f) => expand(f.value, f.at, "IdentityFile")),
    identityFilesConfigured: s.identityFiles.length > 0,
    identitiesOnly: s.identitiesOnly ?? false,
    identityAgent: resolveAgent(s.identityAgent, tokens, env),
    serverAliveIntervalMs: (s.serverAliveIntervalSec ?? 0) * 1000,
    serverAliveCountMax: s.serverAliveCountMax ?? 3,
    strictHostKeyChecking: s.strictHostKeyChecking ?? "ask",
    userKnownHostsFiles:
      knownHosts.values.length === 1 && knownHosts.values[0]?.toLowerCase() === "none"
        ? []
        : knownHosts.values.map((v) => expand(v, knownHosts.at, "UserKnownHostsFile")),
    globalKnownHostsFiles: s.globalKnownHostsFiles ?? DEFAULT_GLOBAL_KNOWN_HOSTS_FILES,
    hashKnownHosts: s.hashKnownHosts ?? false,
    configFiles: ctx.filesRead,
  };
  if (s.proxyJump !== undefined) resolved.proxyJump = s.proxyJump;
  if (s.connectTimeoutSec !== undefined) resolved.connectTimeoutMs = s.connectTimeoutSec * 1000;
  if (s.hostKeyAlias !== undefined) resolved.hostKeyAlias = s.hostKeyAlias;
  return resolved;
}

function tokensFor(
  hostName: string,
  alias: string,
  port: number,
  remoteUser: string,
  opts: ResolveSshHostOptions,
): TokenValues {
  return {
    hostName,
    alias,
    port,
    remoteUser,
    localUser: opts.user,
    home: opts.home,
    uid: opts.uid ?? process.getuid?.(),
    localHostName: opts.localHostName ?? hostname(),
  };
}

function resolveAgent(
  setting: { value: string; at: ConfigLocation } | undefined,
  tokens: TokenValues,
  env: Record<string, string | undefined>,
): IdentityAgent {
  if (setting === undefined || setting.value === "SSH_AUTH_SOCK") return { kind: "env" };
  if (setting.value.toLowerCase() === "none") return { kind: "none" };
  const bareVar = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(setting.value);
  if (bareVar?.[1] !== undefined) {
    const path = env[bareVar[1]];
    if (path === undefined) {
      throw configError(
        setting.at,
        `IdentityAgent refers to $${bareVar[1]}, which is not set in the environment`,
        `Set ${bareVar[1]} to the agent socket path, or write the socket path out.`,
      );
    }
    return { kind: "socket", path };
  }
  return { kind: "socket", path: expandPath(setting.value, tokens, env, setting.at, "IdentityAgent") };
}

/** The resolver's inputs from the running process: home directory, user name (as OpenSSH: from passwd), environment. */
export function localSshContext(): Pick<ResolveSshHostOptions, "home" | "user" | "env"> {
  const info = userInfo();
  return {
    home: process.env.HOME ?? info.homedir,
    user: passwdName(info.uid) ?? info.username,
    env: process.env,
  };
}

// Bun's userInfo() may report "unknown" without $USER, so read the passwd entry for our uid.
function passwdName(uid: number): string | undefined {
  try {
    const entry = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.split(":")[2] === String(uid));
    return entry?.split(":")[0] || process.env.USER || undefined;
  } catch {
    return process.env.USER;
  }
}
