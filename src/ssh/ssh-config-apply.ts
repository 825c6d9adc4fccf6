// Folds the active ssh_config lines into settings with OpenSSH precedence: the first obtained value wins,
// IdentityFile accumulates, ProxyJump and ProxyCommand share one slot; refuses what we cannot honour.

import type { JumpHost } from "./ssh-config-syntax.ts";
import {
  type ConfigLine,
  type ConfigLocation,
  configError,
  parseNonNegativeInt,
  parsePort,
  parseStrictHostKeyChecking,
  parseTimeSec,
  parseYesNo,
  type StrictHostKeyChecking,
} from "./ssh-config-syntax.ts";

interface Located {
  value: string;
  at: ConfigLocation;
}

export interface ConfigSettings {
  hostName?: Located;
  user?: string;
  port?: number;
  identityFiles: Located[];
  identitiesOnly?: boolean;
  identityAgent?: Located;
  proxyJump?: JumpHost;
  connectTimeoutSec?: number;
  serverAliveIntervalSec?: number;
  serverAliveCountMax?: number;
  strictHostKeyChecking?: StrictHostKeyChecking;
  userKnownHostsFiles?: { values: string[]; at: ConfigLocation };
  globalKnownHostsFiles?: string[];
  hostKeyAlias?: string;
  hashKnownHosts?: boolean;
}

export function applyLines(lines: ConfigLine[]): ConfigSettings {
  const s: ConfigSettings = { identityFiles: [] };
  // OpenSSH keeps "none" in these slots so that a later line cannot set them.
  let jump: string | undefined;
  let command: Located | undefined;
  let knownHostsCommand: Located | undefined;
  for (const line of lines) {
    const at: ConfigLocation = line;
    const arg = line.args[0] ?? "";
    const single = (): string => {
      if (line.args.length > 1) {
        throw configError(
          at,
          `keyword ${line.keyword} has extra arguments at end of line`,
          "Keep one value.",
        );
      }
      return arg;
    };
    switch (line.keyword) {
      case "hostname":
        s.hostName ??= { value: single(), at };
        break;
      case "user":
        s.user ??= single();
        break;
      case "port":
        s.port ??= parsePort(single(), at);
        break;
      case "identityfile": {
        const file = single();
        if (!s.identityFiles.some((f) => f.value === file)) s.identityFiles.push({ value: file, at });
        break;
      }
      case "identitiesonly":
        s.identitiesOnly ??= parseYesNo(single(), at, "IdentitiesOnly");
        break;
      case "identityagent":
        s.identityAgent ??= { value: single(), at };
        break;
      case "connecttimeout": {
        const v = single();
        if (s.connectTimeoutSec === undefined && v.toLowerCase() !== "none") {
          s.connectTimeoutSec = parseTimeSec(v, at, "ConnectTimeout");
        }
        break;
      }
      case "serveraliveinterval":
        s.serverAliveIntervalSec ??= parseTimeSec(single(), at, "ServerAliveInterval");
        break;
      case "serveralivecountmax":
        s.serverAliveCountMax ??= parseNonNegativeInt(single(), at, "ServerAliveCountMax");
        break;
      case "stricthostkeychecking":
        s.strictHostKeyChecking ??= parseStrictHostKeyChecking(single(), at);
        break;
      case "userknownhostsfile":
        s.userKnownHostsFiles ??= { values: line.args, at };
        break;
      case "globalknownhostsfile":
        s.globalKnownHostsFiles ??= line.args;
        break;
      case "hashknownhosts":
        s.hashKnownHosts ??= parseYesNo(single(), at, "HashKnownHosts");
        break;
      case "hostkeyalias":
        s.hostKeyAlias ??= single();
        break;
      case "proxyjump":
        if (jump === undefined && command === undefined) {
          jump = single();
          if (jump.toLowerCase() !== "none") s.proxyJump = parseJump(jump, at);
        }
        break;
      case "proxycommand":
        if (command === undefined && (jump === undefined || jump.toLowerCase() === "none")) {
          command = { value: line.args.join(" "), at };
        }
        break;
      case "knownhostscommand":
        knownHostsCommand ??= { value: line.args.join(" "), at };
        break;
    }
  }
  if (command !== undefined && command.value.toLowerCase() !== "none") {
    throw configError(
      command.at,
      `"ProxyCommand ${command.value}" is not supported (awaitless never runs commands from ssh config)`,
      'For a bastion write "ProxyJump [user@]bastion[:port]" instead; otherwise set transport = "openssh" for this host in the awaitless config.',
    );
  }
  if (knownHostsCommand !== undefined && knownHostsCommand.value.toLowerCase() !== "none") {
    throw configError(
      knownHostsCommand.at,
      `"KnownHostsCommand ${knownHostsCommand.value}" is not supported (awaitless never runs commands from ssh config)`,
      'Put the host keys in a file named by UserKnownHostsFile, or set transport = "openssh" for this host.',
    );
  }
  return s;
}

// `[ssh://][user@]host[:port]`, host possibly a bracketed IPv6 address. One hop only.
function parseJump(value: string, at: ConfigLocation): JumpHost {
  if (value.includes(",")) {
    const hops = value.split(",");
    throw configError(
      at,
      `"ProxyJump ${value}" has ${hops.length} hops; awaitless supports one`,
      `Write "ProxyJump ${hops.at(-1)}" here and give "Host ${hops.at(-1)}" its own "ProxyJump ${hops.slice(0, -1).join(",")}" line, or set transport = "openssh" for this host.`,
    );
  }
  const m = /^(?:ssh:\/\/)?(?:([^@]*)@)?(\[[^\]]+\]|[^:@[\]]+)(?::(\d+))?$/.exec(value);
  const host = m?.[2]?.replace(/^\[(.*)\]$/, "$1");
  if (m === null || host === undefined || host === "" || m[1] === "") {
    throw configError(
      at,
      `ProxyJump "${value}" is not [user@]host[:port]`,
      'Write e.g. "ProxyJump admin@bastion:2222".',
    );
  }
  const jumpHost: JumpHost = { host };
  if (m[1] !== undefined) jumpHost.user = m[1];
  if (m[3] !== undefined) jumpHost.port = parsePort(m[3], at);
  return jumpHost;
}
