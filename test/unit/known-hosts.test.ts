// known_hosts parsing and host-key verdicts, including hashed entries produced by the real `ssh-keygen -H`.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  appendKnownHost,
  checkHostKey,
  formatConnectOnceCommand,
  formatFingerprintCommand,
  hostKeyFromBlob,
  knownHostName,
  knownKeyTypes,
  parseKnownHosts,
} from "../../src/ssh/known-hosts.ts";
import { gateOnAvailability } from "../helpers/sshd.ts";

const dir = mkdtempSync(join(tmpdir(), "awl-knownhosts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A fake wire-format key blob of the given type (its content is all that matters for comparison).
function fakeKey(keyType: string, seed: number): { keyType: string; keyBase64: string } {
  const type = Buffer.from(keyType);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(type.length);
  return { keyType, keyBase64: Buffer.concat([len, type, Buffer.alloc(32, seed)]).toString("base64") };
}
const K1 = fakeKey("ssh-ed25519", 1);
const K2 = fakeKey("ssh-ed25519", 2);
const R1 = fakeKey("ssh-rsa", 3);
const line = (hosts: string, k: { keyType: string; keyBase64: string }) =>
  `${hosts} ${k.keyType} ${k.keyBase64}`;

function fileWith(name: string, ...lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

describe("checkHostKey", () => {
  const main = fileWith(
    "main",
    "# comment line",
    "",
    line("alpha.example,192.0.2.10", K1),
    line("[alpha.example]:2222", K2),
    line("*.wild.example,!secret.wild.example", K1),
    line("web?.example", K1),
    "@cert-authority *.ca.example " + `${R1.keyType} ${R1.keyBase64}`,
    "@revoked revoked.example " + `${K1.keyType} ${K1.keyBase64}`,
    line("revoked.example", K1),
    "garbage-line-without-key",
    "@unknown-marker beta.example ssh-ed25519 AAAA",
    line("Mixed.CASE.example", K1),
    line("bare.example", K1),
    line("rsa-only.example", R1),
  );
  const cases: { name: string; host: string; port: number; key: typeof K1; want: object }[] = [
    { name: "plain name", host: "alpha.example", port: 22, key: K1, want: { status: "match", line: 3 } },
    {
      name: "second name in a comma list",
      host: "192.0.2.10",
      port: 22,
      key: K1,
      want: { status: "match", line: 3 },
    },
    { name: "changed key", host: "alpha.example", port: 22, key: K2, want: { status: "mismatch", line: 3 } },
    {
      name: "[host]:port entry",
      host: "alpha.example",
      port: 2222,
      key: K2,
      want: { status: "match", line: 4 },
    },
    {
      name: "changed key on a port",
      host: "alpha.example",
      port: 2222,
      key: K1,
      want: { status: "mismatch", line: 4 },
    },
    { name: "wildcard", host: "a.wild.example", port: 22, key: K1, want: { status: "match", line: 5 } },
    {
      name: "negation excludes",
      host: "secret.wild.example",
      port: 22,
      key: K1,
      want: { status: "unknown" },
    },
    {
      name: "? is one character",
      host: "web1.example",
      port: 22,
      key: K1,
      want: { status: "match", line: 6 },
    },
    { name: "? is not zero characters", host: "web.example", port: 22, key: K1, want: { status: "unknown" } },
    {
      name: "cert-authority is not a plain key",
      host: "x.ca.example",
      port: 22,
      key: R1,
      want: { status: "unknown" },
    },
    {
      name: "@revoked wins",
      host: "revoked.example",
      port: 22,
      key: K1,
      want: { status: "revoked", line: 8 },
    },
    {
      name: "host names are case-insensitive",
      host: "mixed.case.EXAMPLE",
      port: 22,
      key: K1,
      want: { status: "match" },
    },
    {
      name: "port-less entry, same key",
      host: "bare.example",
      port: 2200,
      key: K1,
      want: { status: "match", line: 13 },
    },
    {
      name: "port-less entry, other key",
      host: "bare.example",
      port: 2200,
      key: K2,
      want: { status: "unknown" },
    },
    {
      // OpenSSH 9.2 says "REMOTE HOST IDENTIFICATION HAS CHANGED" here, in every StrictHostKeyChecking mode.
      name: "only another key type known: a change, not a new key",
      host: "rsa-only.example",
      port: 22,
      key: K1,
      want: { status: "mismatch", line: 14, keyType: "ssh-rsa" },
    },
    { name: "absent host", host: "nowhere.example", port: 22, key: K1, want: { status: "unknown" } },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = checkHostKey({ host: c.host, port: c.port, ...c.key }, [join(dir, "missing"), main]);
      expect(got).toMatchObject(c.want);
      if (Object.hasOwn(c.want, "line")) expect(got.file).toBe(main);
    });
  }

  test("files are read in order and the first deciding line is reported", () => {
    const first = fileWith("first", line("multi.example", K1));
    const second = fileWith("second", line("multi.example", K2));
    expect(checkHostKey({ host: "multi.example", port: 22, ...K2 }, [first, second])).toMatchObject({
      status: "match",
      file: second,
      line: 1,
    });
    expect(knownKeyTypes("rsa-only.example", 22, [main])).toEqual(["ssh-rsa"]);
  });

  test("malformed and unknown-marker lines are skipped", () => {
    const entries = parseKnownHosts(readFileSync(main, "utf8"), main);
    expect(entries.map((e) => e.line)).toEqual([3, 4, 5, 6, 7, 8, 9, 12, 13, 14]);
    expect(entries.find((e) => e.line === 7)?.marker).toBe("cert-authority");
  });
});

const keygen = Bun.which("ssh-keygen");
const runKeygen = gateOnAvailability("known_hosts hashed by ssh-keygen -H", {
  ok: keygen !== null,
  why: "ssh-keygen is not installed; run `apt-get install openssh-client`",
});

describe.skipIf(!runKeygen)("hashed entries written by ssh-keygen -H", () => {
  test("match for the hashed names and ports, and not for others", () => {
    const keyPath = join(dir, "host_key");
    Bun.spawnSync([keygen ?? "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", keyPath]);
    const [keyType = "", keyBase64 = ""] = readFileSync(`${keyPath}.pub`, "utf8").split(" ");
    const key = { keyType, keyBase64 };
    const file = fileWith("hashed", line("hashed.example", key), line("[hashed.example]:2022", key));
    const proc = Bun.spawnSync([keygen ?? "ssh-keygen", "-H", "-f", file], {
      stdout: "ignore",
      stderr: "pipe",
    });
    expect(proc.exitCode).toBe(0);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("hashed.example");
    expect(text.split("\n").filter((l) => l.startsWith("|1|"))).toHaveLength(2);
    expect(checkHostKey({ host: "hashed.example", port: 22, ...key }, [file]).status).toBe("match");
    expect(checkHostKey({ host: "hashed.example", port: 2022, ...key }, [file])).toMatchObject({
      status: "match",
      file,
      line: 2,
    });
    expect(checkHostKey({ host: "hashed.example", port: 22, ...K1 }, [file]).status).toBe("mismatch");
    expect(checkHostKey({ host: "other.example", port: 22, ...key }, [file]).status).toBe("unknown");
  });
});

describe("adding keys", () => {
  test("formatFingerprintCommand and formatConnectOnceCommand give runnable commands", () => {
    expect(formatFingerprintCommand("box.example", 22, "ssh-ed25519")).toBe(
      "ssh-keyscan -t ed25519 box.example | ssh-keygen -lf -",
    );
    expect(formatFingerprintCommand("127.0.0.1", 2222, "ecdsa-sha2-nistp256")).toBe(
      "ssh-keyscan -t ecdsa -p 2222 127.0.0.1 | ssh-keygen -lf -",
    );
    expect(formatConnectOnceCommand("box.example", 2200, "alice")).toBe("ssh -p 2200 alice@box.example true");
    expect(knownHostName("Box", 22)).toBe("box");
    expect(knownHostName("Box", 2200)).toBe("[box]:2200");
  });

  test("appendKnownHost creates the file, adds a newline when missing, and the key then matches", () => {
    const file = join(dir, "new", "known_hosts");
    appendKnownHost(file, "acc.example", 2201, K1.keyType, K1.keyBase64);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    writeFileSync(file, readFileSync(file, "utf8").trimEnd()); // no trailing newline
    appendKnownHost(file, "acc2.example", 22, K2.keyType, K2.keyBase64, { hashed: true });
    const text = readFileSync(file, "utf8");
    expect(text.split("\n")[0]).toBe(line("[acc.example]:2201", K1));
    expect(text).not.toContain("acc2.example");
    expect(checkHostKey({ host: "acc.example", port: 2201, ...K1 }, [file]).status).toBe("match");
    expect(checkHostKey({ host: "acc2.example", port: 22, ...K2 }, [file])).toMatchObject({
      status: "match",
      file,
      line: 2,
    });
  });

  test("hostKeyFromBlob reads the key type from a wire-format blob", () => {
    expect(hostKeyFromBlob(Buffer.from(R1.keyBase64, "base64"))).toEqual(R1);
  });
});
