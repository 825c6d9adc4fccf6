// Turns a host name into connection settings: a [hosts.NAME] entry in our config over ~/.ssh/config resolution.
import type { HostConfig } from "../../config/config.ts";
import { AwaitlessError } from "../../core/errors.ts";
import { agentSocketFor } from "./ssh-auth.ts";
import {
  localSshContext,
  type ResolvedSshHost,
  type ResolveSshHostOptions,
  resolveSshHost,
} from "./ssh-config.ts";
import type { SessionTarget } from "./ssh-session.ts";

export interface SshHostSettings {
  name: string;
  target: SessionTarget;
  /** As configured (default ~/.awaitless); `~` is the remote home, expanded on the host. */
  remoteJobDir: string;
  operationTimeoutMs: number;
  transport: "ssh2" | "openssh";
  /** The ssh config files that were read (doctor). */
  configFiles: string[];
}

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
    hostKey: {
      host: r.hostKeyAlias ?? host,
      port,
      userKnownHostsFiles: r.userKnownHostsFiles,
      globalKnownHostsFiles: r.globalKnownHostsFiles,
      strict: r.strictHostKeyChecking,
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

/** Settings for `name`; throws config_invalid (naming the file and line) for what cannot be honoured. */
export function resolveHostSettings(
  name: string,
  hosts: Record<string, HostConfig>,
  ctx: Ctx = localSshContext(),
): SshHostSettings {
  const entry = hosts[name];
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
    transport: entry?.transport ?? "ssh2",
    configFiles: r.configFiles,
  };
}
