// resolveSshHost over in-memory files: defaults, file order, refusals with file and line, and expansion errors.

import { describe, expect, test } from "bun:test";
import { AwaitlessError } from "../../src/core/model/errors.ts";
import { type ResolveSshHostOptions, resolveSshHost } from "../../src/ssh/ssh-config.ts";
import { matchGlob, splitConfigLine } from "../../src/ssh/ssh-config-syntax.ts";

const HOME = "/home/alice";
// `${NAME}` as written in ssh_config.
const envRef = (name: string): string => ["$", "{", name, "}"].join("");

function withFiles(
  files: Record<string, string>,
  extra: Partial<ResolveSshHostOptions> = {},
): ResolveSshHostOptions {
  return {
    home: HOME,
    user: "alice",
    readFile: (p) => files[p],
    glob: (pattern) =>
      Object.keys(files)
        .filter((f) => matchGlob(f, pattern))
        .sort(),
    env: { AGENT_SOCK: "/run/agent.sock" },
    localHostName: "laptop.example",
    uid: 1000,
    ...extra,
  };
}

function refusal(alias: string, files: Record<string, string>): AwaitlessError {
  try {
    resolveSshHost(alias, withFiles(files));
  } catch (err) {
    if (err instanceof AwaitlessError) return err;
    throw err;
  }
  throw new Error(`resolving ${alias} did not throw`);
}

const USER_CONFIG = `${HOME}/.ssh/config`;

describe("resolveSshHost", () => {
  test("with no config files, returns the defaults ssh -G reports", () => {
    expect(resolveSshHost("Box", withFiles({}))).toEqual({
      alias: "Box",
      hostName: "box",
      user: "alice",
      port: 22,
      identityFiles: [
        "id_rsa",
        "id_ecdsa",
        "id_ecdsa_sk",
        "id_ed25519",
        "id_ed25519_sk",
        "id_xmss",
        "id_dsa",
      ].map((f) => `${HOME}/.ssh/${f}`),
      identityFilesConfigured: false,
      identitiesOnly: false,
      hashKnownHosts: false,
      identityAgent: { kind: "env" },
      serverAliveIntervalMs: 0,
      serverAliveCountMax: 3,
      strictHostKeyChecking: "ask",
      userKnownHostsFiles: [`${HOME}/.ssh/known_hosts`, `${HOME}/.ssh/known_hosts2`],
      globalKnownHostsFiles: ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"],
      configFiles: [],
    });
  });

  test("reads ~/.ssh/config before the system file, and system includes are relative to /etc/ssh", () => {
    const r = resolveSshHost(
      "box",
      withFiles({
        [USER_CONFIG]: "Host box\n  Port 2222\n",
        "/etc/ssh/ssh_config": "Include ssh_config.d/*.conf\nHost *\n  Port 1\n  User sys\n",
        "/etc/ssh/ssh_config.d/a.conf": "Host box\n  ServerAliveInterval 5\n",
      }),
    );
    expect({
      port: r.port,
      user: r.user,
      keepaliveMs: r.serverAliveIntervalMs,
      files: r.configFiles,
    }).toEqual({
      port: 2222,
      user: "sys",
      keepaliveMs: 5000,
      files: [USER_CONFIG, "/etc/ssh/ssh_config", "/etc/ssh/ssh_config.d/a.conf"],
    });
  });

  test("configFile replaces both default files, like ssh -F", () => {
    const files = { [USER_CONFIG]: "Port 1\n", "/etc/ssh/ssh_config": "Port 2\n", "/cfg": "User f\n" };
    const r = resolveSshHost("box", withFiles(files, { configFile: "/cfg" }));
    expect([r.port, r.user, r.configFiles]).toEqual([22, "f", ["/cfg"]]);
  });

  test("expands IdentityAgent $VAR and braced variables, and the local-host tokens", () => {
    const files = {
      [USER_CONFIG]: `Host a\n  IdentityAgent $AGENT_SOCK\nHost b\n  IdentityAgent ${envRef("AGENT_SOCK")}.%L\n  IdentityFile ~/k-%i-%l\n`,
    };
    expect(resolveSshHost("a", withFiles(files)).identityAgent).toEqual({
      kind: "socket",
      path: "/run/agent.sock",
    });
    const b = resolveSshHost("b", withFiles(files));
    expect([b.identityAgent, b.identityFiles]).toEqual([
      { kind: "socket", path: "/run/agent.sock.laptop" },
      [`${HOME}/k-1000-laptop.example`],
    ]);
  });

  test("never reads past the include depth limit", () => {
    expect(refusal("x", { [USER_CONFIG]: "Include config\n" }).message).toContain(
      "Include nested more than 16",
    );
  });
});

describe("refusals name the file and line and say what to write instead", () => {
  const cases: { name: string; config: string; line: number; message: string; hint: string }[] = [
    {
      name: "Match block",
      config: 'Host x\n  User a\nMatch host x exec "notify-send hi"\n  User b\n',
      line: 3,
      message: "Match host x exec",
      hint: 'Rewrite it as a "Host <patterns>" block',
    },
    {
      name: "ProxyCommand",
      config: "Host x\n  ProxyCommand nc %h %p\n",
      line: 2,
      message: "ProxyCommand nc %h %p",
      hint: "ProxyJump [user@]bastion[:port]",
    },
    {
      name: "multi-hop ProxyJump",
      config: "Host x\n  ProxyJump a,b\n",
      line: 2,
      message: "has 2 hops",
      hint: 'Write "ProxyJump b" here and give "Host b" its own "ProxyJump a" line',
    },
    {
      name: "KnownHostsCommand",
      config: "\nKnownHostsCommand /bin/fetch %H\n",
      line: 2,
      message: "KnownHostsCommand",
      hint: "UserKnownHostsFile",
    },
    {
      name: "bad port",
      config: "Port 70000\n",
      line: 1,
      message: 'bad port "70000"',
      hint: "between 1 and 65535",
    },
    {
      name: "extra argument",
      config: "\n\nUser a b\n",
      line: 3,
      message: "extra arguments",
      hint: "Keep one value",
    },
    {
      name: "unknown token",
      config: "IdentityFile ~/.ssh/%C\n",
      line: 1,
      message: "%C",
      hint: "Write the value out",
    },
    {
      name: "HostName token",
      config: "HostName %p.example\n",
      line: 1,
      message: "HostName uses %p",
      hint: "%h",
    },
    {
      name: "unset variable",
      config: `IdentityFile ${envRef("NOPE")}/k\n`,
      line: 1,
      message: envRef("NOPE"),
      hint: "Set NOPE",
    },
    {
      name: "~user",
      config: "IdentityFile ~bob/k\n",
      line: 1,
      message: "another user's home",
      hint: "absolute path",
    },
    {
      name: "bad time",
      config: "ConnectTimeout 1.5\n",
      line: 1,
      message: 'invalid time value "1.5"',
      hint: "1m30s",
    },
    {
      name: "bad quote",
      config: 'User "alice\n',
      line: 1,
      message: "unterminated quote",
      hint: "Close the quote",
    },
    {
      name: "StrictHostKeyChecking",
      config: "StrictHostKeyChecking maybe\n",
      line: 1,
      message: "maybe",
      hint: "accept-new",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const err = refusal("x", { [USER_CONFIG]: c.config });
      expect({ code: err.code, file: err.details.file, line: err.details.line }).toEqual({
        code: "config_invalid",
        file: USER_CONFIG,
        line: c.line,
      });
      expect(err.message).toStartWith(`${USER_CONFIG} line ${c.line}: `);
      expect(err.message).toContain(c.message);
      expect(err.hint).toContain(c.hint);
    });
  }

  test("a ProxyCommand that never takes effect is not refused", () => {
    const files = {
      [USER_CONFIG]: "Host other\n  ProxyCommand nc %h %p\nHost x\n  ProxyJump b\n  ProxyCommand nc\n",
    };
    expect(resolveSshHost("x", withFiles(files)).proxyJump).toEqual({ host: "b" });
  });
});

describe("config line syntax", () => {
  const at = { file: "f", line: 1 };
  test("splits keyword, = and quoted arguments, and stops at a comment word", () => {
    expect(splitConfigLine('  HostName = "a b" c\\"d  # note', at)).toEqual({
      file: "f",
      line: 1,
      keyword: "hostname",
      args: ["a b", 'c"d'],
    });
    expect(splitConfigLine("   # only a comment", at)).toBeUndefined();
    expect(splitConfigLine("", at)).toBeUndefined();
  });
  test("? matches exactly one character and * any run", () => {
    expect([matchGlob("web1", "web?"), matchGlob("web", "web?"), matchGlob("web12", "web?")]).toEqual([
      true,
      false,
      false,
    ]);
    expect([matchGlob("a.b.c", "a*c"), matchGlob("", "*"), matchGlob("ab", "a*b*")]).toEqual([
      true,
      true,
      true,
    ]);
  });
});
