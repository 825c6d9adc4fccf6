// ssh_config value expansion as OpenSSH 9 does it: `~` (home), `%` tokens and `${VAR}` environment references.

import { type ConfigLocation, configError } from "./ssh-config-syntax.ts";

/** Values the `%` tokens stand for (names follow ssh_config(5) TOKENS). */
export interface TokenValues {
  /** %h: the final remote host name. */
  hostName: string;
  /** %n: the alias as given. */
  alias: string;
  /** %p: the remote port. */
  port: number;
  /** %r: the remote user. */
  remoteUser: string;
  /** %u: the local user. */
  localUser: string;
  /** %d: the local home directory. */
  home: string;
  /** %i: the local user ID. */
  uid?: number;
  /** %l: the local host name including the domain; %L: its first label. */
  localHostName?: string;
}

const TOKEN_HELP = "Supported tokens: %% %d %h %i %l %L %n %p %r %u.";

// Expands `%x` tokens; only the letters in `allowed` are legal for this keyword (OpenSSH aborts on others).
export function expandTokens(
  value: string,
  tokens: TokenValues,
  allowed: string,
  at: ConfigLocation,
  keyword: string,
): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value.charAt(i);
    if (c !== "%") {
      out += c;
      continue;
    }
    const t = value.charAt(++i);
    if (t === "%") {
      out += "%";
      continue;
    }
    const v = allowed.includes(t) ? tokenValue(t, tokens) : undefined;
    if (v === undefined) {
      throw configError(
        at,
        `${keyword} uses %${t}, which awaitless does not expand there`,
        `${keyword} accepts ${allowed
          .split("")
          .map((x) => `%${x}`)
          .join(" ")} and %%. ${TOKEN_HELP} Write the value out instead.`,
      );
    }
    out += v;
  }
  return out;
}

function tokenValue(t: string, v: TokenValues): string | undefined {
  switch (t) {
    case "h":
      return v.hostName;
    case "n":
      return v.alias;
    case "p":
      return String(v.port);
    case "r":
      return v.remoteUser;
    case "u":
      return v.localUser;
    case "d":
      return v.home;
    case "i":
      return v.uid === undefined ? undefined : String(v.uid);
    case "l":
      return v.localHostName;
    case "L":
      return v.localHostName?.split(".")[0];
    default:
      return undefined;
  }
}

// `~` and `~/x` become the home directory; `~user/x` is refused (we do not look up other users).
export function expandTilde(value: string, home: string, at: ConfigLocation, keyword: string): string {
  if (value === "~") return home;
  if (value.startsWith("~/")) return `${home}${value.slice(1)}`;
  if (value.startsWith("~")) {
    throw configError(
      at,
      `${keyword} "${value}" refers to another user's home directory`,
      "Write the absolute path instead of ~user.",
    );
  }
  return value;
}

// `${NAME}` references to environment variables; an unset variable is an error, as in OpenSSH.
export function expandEnv(
  value: string,
  env: Record<string, string | undefined>,
  at: ConfigLocation,
  keyword: string,
): string {
  return value.replace(/\$\{([^}]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) {
      throw configError(
        at,
        `${keyword} refers to \${${name}}, which is not set in the environment`,
        `Set ${name} before running awaitless, or write the path out.`,
      );
    }
    return v;
  });
}

/** Tokens OpenSSH 9.2 allows in file-like keywords (IdentityFile, UserKnownHostsFile, IdentityAgent). */
export const PATH_TOKENS = "dhilLnpru";

// The full treatment OpenSSH gives path keywords: `~` first, then `%` tokens and `${VAR}`.
export function expandPath(
  value: string,
  tokens: TokenValues,
  env: Record<string, string | undefined>,
  at: ConfigLocation,
  keyword: string,
): string {
  const tilded = expandTilde(value, tokens.home, at, keyword);
  return expandEnv(expandTokens(tilded, tokens, PATH_TOKENS, at, keyword), env, at, keyword);
}
