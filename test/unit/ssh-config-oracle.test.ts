// Our ssh_config resolver against OpenSSH itself: every alias of every fixture config resolved by
// `ssh -G -F` and by resolveSshHost must agree on every keyword we read.

import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { localSshContext, type ResolvedSshHost, resolveSshHost } from "../../src/ssh/ssh-config.ts";
import { expandPath } from "../../src/ssh/ssh-config-expand.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "ssh", "config");
const sshBinary = Bun.which("ssh");
const runOracle = gateOnAvailability(
  "ssh_config oracle (ssh -G)",
  sshBinary === null
    ? { ok: false, why: "the OpenSSH client `ssh` is not installed; run `apt-get install openssh-client`" }
    : { ok: true, why: "" },
);

const home = mkdtempSync(join(tmpdir(), "awl-sshcfg-"));
const sshDir = join(home, ".ssh");
cpSync(FIXTURES, sshDir, { recursive: true });
afterAll(() => rmSync(home, { recursive: true, force: true }));

// `ssh -G` expands `~` and %d with the passwd home (not $HOME); we map that back to our temp home.
const passwdHome = userInfo().homedir;
const env: Record<string, string | undefined> = {
  ...process.env,
  HOME: home,
  AWL_FIXTURE_DIR: join(home, "sockets"),
  AWL_FIXTURE_SOCK: "/run/x.sock",
};
const localUser = localSshContext().user;

function sshG(configFile: string, alias: string): Map<string, string[]> {
  const proc = Bun.spawnSync([sshBinary ?? "ssh", "-G", "-F", configFile, alias], { env, stdin: "ignore" });
  if (proc.exitCode !== 0) throw new Error(`ssh -G ${alias} failed: ${proc.stderr.toString()}`);
  const out = new Map<string, string[]>();
  for (const line of proc.stdout.toString().split("\n")) {
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const key = line.slice(0, space);
    out.set(key, [...(out.get(key) ?? []), line.slice(space + 1)]);
  }
  return out;
}

const toOurHome = (p: string): string =>
  p === passwdHome || p.startsWith(`${passwdHome}/`) ? home + p.slice(passwdHome.length) : p;

// Puts `ssh -G` output into the shape of ResolvedSshHost (identity files still need our expansion,
// because OpenSSH 9.2 prints them unexpanded).
function fromOpenSsh(g: Map<string, string[]>): Record<string, unknown> {
  const one = (k: string): string => g.get(k)?.[0] ?? "";
  const tokens = {
    hostName: one("hostname"),
    alias: one("host"),
    port: Number(one("port")),
    remoteUser: one("user"),
    localUser,
    home,
  };
  const at = { file: "ssh -G", line: 0 };
  const agent = g.get("identityagent")?.[0];
  const jump = g.get("proxyjump")?.[0];
  const knownHosts = one("userknownhostsfile");
  return {
    hostName: one("hostname"),
    user: one("user"),
    port: Number(one("port")),
    identityFiles: (g.get("identityfile") ?? [])
      .filter((f) => f !== "none")
      .map((f) => expandPath(f, tokens, env, at, "IdentityFile")),
    identitiesOnly: one("identitiesonly") === "yes",
    identityAgent:
      agent === undefined || agent === "SSH_AUTH_SOCK"
        ? { kind: "env" }
        : agent === "none"
          ? { kind: "none" }
          : { kind: "socket", path: agent.startsWith("$") ? env[agent.slice(1)] : toOurHome(agent) },
    proxyJump: jump,
    connectTimeoutMs: one("connecttimeout") === "none" ? undefined : Number(one("connecttimeout")) * 1000,
    serverAliveIntervalMs: Number(one("serveraliveinterval")) * 1000,
    serverAliveCountMax: Number(one("serveralivecountmax")),
    strictHostKeyChecking:
      { true: "yes", false: "no" }[one("stricthostkeychecking")] ?? one("stricthostkeychecking"),
    userKnownHostsFiles: knownHosts === "none" ? [] : knownHosts.split(" ").map(toOurHome),
    globalKnownHostsFiles: one("globalknownhostsfile").split(" "),
    hostKeyAlias: g.get("hostkeyalias")?.[0],
    hashKnownHosts: one("hashknownhosts") === "yes",
  };
}

function ours(r: ResolvedSshHost): Record<string, unknown> {
  const j = r.proxyJump;
  return {
    hostName: r.hostName,
    user: r.user,
    port: r.port,
    identityFiles: r.identityFiles,
    identitiesOnly: r.identitiesOnly,
    identityAgent: r.identityAgent,
    // ssh -G prints the hop as [user@]host[:port] (brackets around IPv6 addresses).
    proxyJump:
      j === undefined
        ? undefined
        : `${j.user === undefined ? "" : `${j.user}@`}${j.host.includes(":") ? `[${j.host}]` : j.host}${j.port === undefined ? "" : `:${j.port}`}`,
    connectTimeoutMs: r.connectTimeoutMs,
    serverAliveIntervalMs: r.serverAliveIntervalMs,
    serverAliveCountMax: r.serverAliveCountMax,
    strictHostKeyChecking: r.strictHostKeyChecking,
    userKnownHostsFiles: r.userKnownHostsFiles,
    globalKnownHostsFiles: r.globalKnownHostsFiles,
    hostKeyAlias: r.hostKeyAlias,
    hashKnownHosts: r.hashKnownHosts,
  };
}

const corpus = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".conf"))
  .map((file) => {
    const header = /^# aliases: (.*)$/m.exec(readFileSync(join(FIXTURES, file), "utf8"));
    return { file, aliases: header?.[1]?.split(" ") ?? [] };
  });

describe.skipIf(!runOracle)("resolveSshHost agrees with `ssh -G`", () => {
  test("the corpus has configs and aliases", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(5);
    expect(corpus.every((c) => c.aliases.length > 0)).toBe(true);
  });
  for (const { file, aliases } of corpus) {
    for (const alias of aliases) {
      test(`${file}: ${alias}`, () => {
        const configFile = join(sshDir, file);
        const resolved = resolveSshHost(alias, { home, user: localUser, configFile, env });
        expect(ours(resolved)).toEqual(fromOpenSsh(sshG(configFile, alias)));
      });
    }
  }
});
