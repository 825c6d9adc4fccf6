// Proves the private sshd harness with the real ssh2 client: key login as the dash and busybox users,
// host-key verification through our known_hosts module, and stop() leaving no process behind.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "ssh2";
import {
  checkHostKey,
  formatFingerprintCommand,
  type HostKeyCheck,
  hostKeyFromBlob,
} from "../../src/ssh/known-hosts.ts";
import { fingerprint } from "../../src/ssh/ssh-host-key.ts";
import {
  descendantPids,
  gateOnAvailability,
  isAlive,
  type SshdHandle,
  sshdAvailable,
  startSshd,
} from "../helpers/sshd.ts";
import { until } from "../helpers/until.ts";

const runE2e = gateOnAvailability("sshd e2e tests (private OpenSSH server)", sshdAvailable());

interface Session {
  client: Client;
  verdict: () => HostKeyCheck | undefined;
}

// Connects with the harness client key; the host key must "match" in the given known_hosts file.
function connect(sshd: SshdHandle, user: string, knownHostsFile: string): Promise<Session> {
  const client = new Client();
  let verdict: HostKeyCheck | undefined;
  return new Promise((resolve, reject) => {
    client.on("ready", () => resolve({ client, verdict: () => verdict }));
    client.on("error", (err) => reject(Object.assign(err, { verdict })));
    client.connect({
      host: sshd.host,
      port: sshd.port,
      username: user,
      privateKey: readFileSync(sshd.clientKeyPath),
      readyTimeout: 15_000,
      hostVerifier: (blob: Buffer) => {
        verdict = checkHostKey({ host: sshd.host, port: sshd.port, ...hostKeyFromBlob(blob) }, [
          knownHostsFile,
        ]);
        return verdict.status === "match";
      },
    });
  });
}

function exec(
  client: Client,
  command: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err, stream) => {
      if (err) return reject(err);
      let stdout = "";
      let stderr = "";
      stream.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      stream.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      stream.on("close", (code: number | null) => resolve({ code, stdout, stderr }));
    });
  });
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return ""; // exited meanwhile
  }
}

const waitUntil = (cond: () => boolean, timeoutMs: number, what: string) => until(what, cond, timeoutMs, 20);

describe.skipIf(!runE2e)("private sshd harness", () => {
  let sshd: SshdHandle;
  let knownHosts: string;
  beforeAll(async () => {
    sshd = await startSshd();
    knownHosts = join(sshd.dir, "client_known_hosts");
    writeFileSync(knownHosts, `${sshd.hostKeyLine}\n`);
  });
  afterAll(async () => {
    await sshd?.stop();
  });

  const shells = [
    { label: "dash", user: () => sshd.users.dash, argv0: "dash", binary: "dash" },
    { label: "busybox sh", user: () => sshd.users.busybox, argv0: "sh", binary: "busybox" },
  ];
  for (const s of shells) {
    test(`logs in with the key as the ${s.label} user, whose login shell runs the command`, async () => {
      const { client, verdict } = await connect(sshd, s.user(), knownHosts);
      try {
        expect(verdict()).toMatchObject({ status: "match", file: knownHosts, line: 1 });
        const r = await exec(client, 'echo $0; id -un; readlink /proc/$$/exe; echo "$HOME"');
        const [argv0, user, exe, home] = r.stdout.trim().split("\n");
        expect({ code: r.code, argv0, user, exe, home }).toEqual({
          code: 0,
          argv0: s.argv0,
          user: s.user(),
          exe: realpathSync(Bun.which(s.binary) ?? s.binary),
          home: `/home/${s.user()}`,
        });
      } finally {
        client.end();
      }
    });
  }

  test("refuses an unknown host key and a changed one, with our reason", async () => {
    const empty = join(sshd.dir, "empty_known_hosts");
    writeFileSync(empty, "");
    const unknown = await connect(sshd, sshd.users.dash, empty).then(
      () => undefined,
      (e: { verdict?: HostKeyCheck }) => e.verdict,
    );
    expect(unknown).toEqual({ status: "unknown" });
    const changed = join(sshd.dir, "changed_known_hosts");
    const otherKey = readFileSync(`${sshd.clientKeyPath}.pub`, "utf8").split(" ").slice(0, 2).join(" ");
    writeFileSync(changed, `[${sshd.host}]:${sshd.port} ${otherKey}\n`);
    const mismatch = await connect(sshd, sshd.users.dash, changed).then(
      () => undefined,
      (e: { verdict?: HostKeyCheck }) => e.verdict,
    );
    expect(mismatch).toMatchObject({ status: "mismatch", file: changed, line: 1 });
  });

  test("the command formatFingerprintCommand suggests prints the fingerprint OpenSSH shows for the key", () => {
    const command = formatFingerprintCommand(sshd.host, sshd.port, sshd.hostKeyType);
    const proc = Bun.spawnSync(["sh", "-c", command], { stdout: "pipe", stderr: "pipe" });
    expect(proc.exitCode).toBe(0);
    expect(proc.stdout.toString()).toContain(fingerprint(Buffer.from(sshd.hostKeyBase64, "base64")));
    expect(proc.stdout.toString()).toContain("(ED25519)");
  });

  test("stop() ends sshd and its session processes, by PID", async () => {
    const own = await startSshd({ users: [sshd.users.dash] });
    const ownKnownHosts = join(sshd.dir, "own_known_hosts");
    writeFileSync(ownKnownHosts, `${own.hostKeyLine}\n`);
    const { client } = await connect(own, own.users.dash, ownKnownHosts);
    client.on("error", () => {}); // the server goes away under it
    client.exec("exec sleep 600", () => {});
    await waitUntil(
      () => descendantPids(own.pid).some((p) => commandLine(p).startsWith("sleep")),
      10_000,
      "the remote sleep to start",
    );
    const tree = [own.pid, ...descendantPids(own.pid)];
    await own.stop();
    client.end();
    expect(tree.filter(isAlive)).toEqual([]);
  });
});
