// IdentitiesOnly planning (pure): which public keys the agent may offer, where they come from, and what a failure says.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  allowedAgentKeys,
  authFailure,
  type ParsedKeyResult,
  planAuth,
  publicKeyFromOpensshKeyFile,
  publicKeyFromPubFile,
} from "../../src/ssh/ssh-auth.ts";

const dir = mkdtempSync(join(tmpdir(), "awl-auth-io-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const wire = (s: string | Buffer) => {
  const b = typeof s === "string" ? Buffer.from(s, "latin1") : s;
  return Buffer.concat([u32(b.length), b]);
};
/** An ssh-ed25519 public key blob whose 32 key bytes are all `fill`. */
const blob = (fill: number) => Buffer.concat([wire("ssh-ed25519"), wire(Buffer.alloc(32, fill))]);
const pubLine = (b: Buffer, comment = "me@box") => `ssh-ed25519 ${b.toString("base64")} ${comment}\n`;

/** An OpenSSH-format private key file: magic, cipher, KDF, KDF options, key count, public blobs, sealed part. */
function opensshKeyFile(pubs: Buffer[], cipher = "aes256-ctr"): string {
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0", "latin1"),
    wire(cipher),
    wire(cipher === "none" ? "none" : "bcrypt"),
    wire(cipher === "none" ? "" : Buffer.concat([wire(Buffer.alloc(16, 7)), u32(16)])),
    u32(pubs.length),
    ...pubs.map((p) => wire(p)),
    wire(Buffer.alloc(64, 9)),
  ]);
  return armor(body);
}

function armor(body: Buffer): string {
  const lines = body.toString("base64").match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join("\n")}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

// Files whose content starts with "plain:N" parse as unencrypted keys with blob(N); "enc" ones need a passphrase.
const parse = (d: Buffer): ParsedKeyResult => {
  const text = d.toString();
  const m = /^plain:(\d+)/.exec(text);
  if (m) return { kind: "ok", key: text, publicKey: blob(Number(m[1])) };
  if (text.startsWith("enc") || text.includes("OPENSSH PRIVATE KEY")) return { kind: "encrypted" };
  return { kind: "invalid", message: "junk" };
};

function file(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

const SOCK = "/agent.sock";

describe("IdentitiesOnly yes: the agent may offer only the identity files' keys", () => {
  test("an unencrypted identity file is offered from the file alone, never a second time through the agent", () => {
    const key = file("plain1", "plain:1");
    const plan = planAuth([key], SOCK, parse, true);
    expect(plan.keys.map((k) => k.path)).toEqual([key]);
    expect(plan.agentKeys).toEqual([]);
    expect(plan.agentSocket).toBeNull();
    // Nothing is missing, so a failure does not blame the agent.
    expect(plan.agentUnused).toBeNull();
    expect(authFailure("u", "box", plan).message).toBe(`authentication as u@box failed (tried ${key})`);
  });

  test("an encrypted identity file with a .pub next to it: the .pub's key", () => {
    const key = file("enc2", "enc");
    file("enc2.pub", pubLine(blob(2)));
    const plan = planAuth([key], SOCK, parse, true);
    expect(plan.agentSocket).toBe(SOCK);
    expect(plan.agentKeys).toEqual([blob(2)]);
    expect(plan.encrypted).toEqual([key]);
    expect(plan.noPublicKey).toEqual([]);
  });

  test("an encrypted file without .pub whose public half cannot be read: nothing, and the agent is not offered", () => {
    const key = file("enc-nopub", "enc (PEM, say)");
    const plan = planAuth([key], SOCK, parse, true);
    expect(plan.agentKeys).toEqual([]);
    expect(plan.agentSocket).toBeNull();
    expect(plan.agentUnused).toBe(SOCK);
    expect(plan.noPublicKey).toEqual([key]);
    const f = authFailure("u", "box", plan);
    expect(f.message).toContain(`the agent at ${SOCK} was not used`);
    expect(f.message).toContain(`no ${key}.pub`);
    expect(f.hint).toContain(`ssh-keygen -y -f ${key} > ${key}.pub`);
    expect(f.hint).toContain(`ssh-add ${key}`);
  });

  test("an encrypted OpenSSH-format file without .pub: the public key stored in clear in it (as OpenSSH reads it)", () => {
    const key = file("enc-openssh", opensshKeyFile([blob(3)]));
    const plan = planAuth([key], SOCK, parse, true);
    expect(plan.agentKeys).toEqual([blob(3)]);
    expect(plan.noPublicKey).toEqual([]);
  });

  test("a .pub is preferred over the key file's own public half; only encrypted files go through the agent", () => {
    const a = file("enc4", opensshKeyFile([blob(40)]));
    file("enc4.pub", pubLine(blob(4)));
    const b = file("plain5", "plain:5");
    const c = file("plain5-again", "plain:5");
    const plan = planAuth([a, b, c, join(dir, "missing")], SOCK, parse, true);
    expect(plan.agentKeys).toEqual([blob(4)]);
    expect(plan.keys.map((k) => k.path)).toEqual([b, c]);
  });

  test("agent-only keys: an IdentityFile that is a .pub, or a missing private half with a .pub, names the agent's key", () => {
    const pubOnly = file("token.pub", pubLine(blob(8)));
    file("hw.pub", pubLine(blob(9)));
    const missing = join(dir, "hw"); // the private half lives on a hardware token
    const plan = planAuth([pubOnly, missing], SOCK, parse, true);
    expect(plan.agentSocket).toBe(SOCK);
    expect(plan.agentKeys).toEqual([blob(8), blob(9)]);
    // Neither is offered as a key file, nor reported unusable.
    expect(plan.keys).toEqual([]);
    expect(plan.unusable).toEqual([]);
    // Without IdentitiesOnly the agent is unfiltered and the .pub file is still not a key file.
    const open = planAuth([pubOnly], SOCK, parse);
    expect(open.agentKeys).toBeNull();
    expect(open.keys).toEqual([]);
    expect(open.unusable).toEqual([]);
  });

  test("an unusable key file adds nothing", () => {
    const key = file("junk", "junk");
    file("junk.pub", pubLine(blob(6)));
    const plan = planAuth([key], SOCK, parse, true);
    expect(plan.agentKeys).toEqual([]);
    expect(plan.agentSocket).toBeNull();
    expect(plan.unusable[0]).toContain("junk");
  });

  test("the agent's list is cut down to the allowed blobs; keys without a blob are dropped", () => {
    const keys = [
      { id: "a", b: blob(1) },
      { id: "b", b: blob(2) },
      { id: "c", b: null },
      { id: "d", b: blob(3) },
    ];
    const kept = allowedAgentKeys(keys, (k) => k.b, [blob(3), blob(1)]);
    expect(kept.map((k) => k.id)).toEqual(["a", "d"]);
    expect(allowedAgentKeys(keys, (k) => k.b, [])).toEqual([]);
  });

  test("the failure names the filtered agent", () => {
    const enc = file("enc7", "enc");
    file("enc7.pub", pubLine(blob(7)));
    const plan = planAuth([enc], SOCK, parse, true);
    const f = authFailure("u", "box", plan);
    expect(f.message).toContain(`the agent at ${SOCK} (only keys of IdentityFile, IdentitiesOnly yes)`);
    // Already IdentitiesOnly: too many failures does not suggest it again.
    expect(authFailure("u", "box", plan, { tooManyFailures: true }).hint).not.toContain("IdentitiesOnly");
  });
});

describe("IdentitiesOnly no (default): the agent is not filtered", () => {
  test("every agent key may be offered and the agent stays even when no file has a public key", () => {
    const key = file("enc-default", "enc");
    for (const plan of [planAuth([key], SOCK, parse), planAuth([key], SOCK, parse, false)]) {
      expect(plan.agentKeys).toBeNull();
      expect(plan.agentSocket).toBe(SOCK);
      expect(plan.agentUnused).toBeNull();
      expect(plan.noPublicKey).toEqual([]);
      const keys = [blob(1), blob(2)];
      expect(allowedAgentKeys(keys, (k) => k, plan.agentKeys)).toEqual(keys);
      expect(authFailure("u", "box", plan).message).toContain(`tried the agent at ${SOCK})`);
    }
  });

  test("too many authentication failures suggests IdentitiesOnly yes", () => {
    const plan = planAuth([file("plain8", "plain:8")], SOCK, parse);
    const f = authFailure("u", "box", plan, { tooManyFailures: true });
    expect(f.message).toContain("too many authentication failures");
    expect(f.hint).toContain("set IdentitiesOnly yes and the right IdentityFile for box");
  });
});

describe("public key files", () => {
  test(".pub: the first key line; comments and blank lines skipped; a blob that disagrees with its type is refused", () => {
    expect(publicKeyFromPubFile(`# mine\n\n${pubLine(blob(1))}`)).toEqual(blob(1));
    expect(publicKeyFromPubFile(`ssh-rsa ${blob(1).toString("base64")}\n`)).toBeNull();
    expect(publicKeyFromPubFile("ssh-ed25519 not*base64\n")).toBeNull();
    expect(publicKeyFromPubFile("ssh-ed25519\n")).toBeNull();
    expect(publicKeyFromPubFile("")).toBeNull();
  });

  test("OpenSSH private key format: the one public blob, encrypted or not; other formats and several keys refused", () => {
    expect(publicKeyFromOpensshKeyFile(Buffer.from(opensshKeyFile([blob(1)])))).toEqual(blob(1));
    expect(publicKeyFromOpensshKeyFile(Buffer.from(opensshKeyFile([blob(2)], "none")))).toEqual(blob(2));
    expect(publicKeyFromOpensshKeyFile(Buffer.from(opensshKeyFile([blob(1), blob(2)])))).toBeNull();
    const pem =
      "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END RSA PRIVATE KEY-----\n";
    expect(publicKeyFromOpensshKeyFile(Buffer.from(pem))).toBeNull();
    const cut = armor(
      Buffer.concat([Buffer.from("openssh-key-v1\0", "latin1"), wire("aes256-ctr"), u32(99)]),
    );
    expect(publicKeyFromOpensshKeyFile(Buffer.from(cut))).toBeNull();
  });

  test.if(Bun.which("ssh-keygen") !== null)(
    "agrees with ssh-keygen: an encrypted key's clear public half is its .pub",
    () => {
      const key = join(dir, "real_ed25519");
      const p = Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "pass-phrase", "-f", key], {
        stdin: "ignore",
      });
      expect(p.exitCode).toBe(0);
      const fromPub = publicKeyFromPubFile(readFileSync(`${key}.pub`, "utf8"));
      expect(fromPub).not.toBeNull();
      expect(publicKeyFromOpensshKeyFile(readFileSync(key))).toEqual(fromPub);
    },
  );
});
