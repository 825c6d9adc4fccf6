// SSH connection e2e against private OpenSSH sshds through the compiled binary: host-key refusals and accept-new,
// encrypted keys (refused without an agent, used through ssh-agent), ProxyJump, and an unreachable host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { gateOnAvailability, type SshdHandle, sshdAvailable, startSshd } from "../helpers/sshd.ts";
import { groupMembers, hostBlock, remoteFile, type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH connection e2e tests (private OpenSSH server)", sshdAvailable());

let w: SshWorld;
let jump: SshdHandle;
let agentPid = 0;
let agentSock = "";
let encKey = "";

function sh(argv: string[], env: Record<string, string> = {}): string {
  const p = Bun.spawnSync(argv, { env: { ...process.env, ...env }, stdin: "ignore" });
  if (p.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    jump = await startSshd({ users: ["awl-dash"] });
    // An encrypted key authorized for awl-dash, and an agent holding it (passphrase given once via askpass).
    encKey = join(w.sb.root, "enc_ed25519");
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret-pass", "-f", encKey]);
    appendFileSync(join(w.sshd.dir, "authorized_keys", "awl-dash"), readFileSync(`${encKey}.pub`));
    agentSock = join(w.sb.root, "agent.sock");
    const out = sh(["ssh-agent", "-a", agentSock, "-s"]);
    agentPid = Number(/SSH_AGENT_PID=(\d+)/.exec(out)?.[1]);
    const askpass = join(w.sb.root, "askpass.sh");
    writeFileSync(askpass, "#!/bin/sh\necho secret-pass\n", { mode: 0o700 });
    sh(["ssh-add", encKey], {
      SSH_AUTH_SOCK: agentSock,
      SSH_ASKPASS: askpass,
      SSH_ASKPASS_REQUIRE: "force",
      DISPLAY: ":0",
    });
    const s = w.sshd;
    appendFileSync(
      join(w.sshDir, "config"),
      [
        hostBlock("unknown-key", s, "awl-dash", [
          `UserKnownHostsFile ${join(w.sb.root, "empty_known_hosts")}`,
        ]),
        hostBlock("changed-key", s, "awl-dash", [
          `UserKnownHostsFile ${join(w.sb.root, "changed_known_hosts")}`,
        ]),
        hostBlock("accept-new", s, "awl-dash", [
          `UserKnownHostsFile ${join(w.sb.root, "new_known_hosts")}`,
          "StrictHostKeyChecking accept-new",
        ]),
        hostBlock("other-type", s, "awl-dash", [
          `UserKnownHostsFile ${join(w.sb.root, "rsa_known_hosts")}`,
          "StrictHostKeyChecking accept-new",
        ]),
        hostBlock("hashed-new", s, "awl-dash", [
          `UserKnownHostsFile ${join(w.sb.root, "hashed_known_hosts")}`,
          "StrictHostKeyChecking accept-new",
          "HashKnownHosts yes",
        ]),
        `Host enc\n  HostName 127.0.0.1\n  Port ${s.port}\n  User awl-dash\n  IdentityFile ${encKey}\n  IdentitiesOnly yes\n`,
        hostBlock("jumpbox", jump, "awl-dash"),
        `Host behind\n  HostName 127.0.0.1\n  Port ${s.port}\n  User awl-dash\n  IdentityFile ${s.clientKeyPath}\n  ProxyJump jumpbox\n`,
      ].join(""),
    );
    appendFileSync(join(w.sshDir, "known_hosts"), `${jump.hostKeyLine}\n`);
    writeFileSync(join(w.sb.root, "empty_known_hosts"), "");
    // Only an RSA key known for the target, which presents its ed25519 key: what a MITM offering another type looks like.
    const rsaKey = join(w.sb.root, "other_rsa");
    sh(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", rsaKey]);
    const [rsaType, rsaB64] = readFileSync(`${rsaKey}.pub`, "utf8").split(" ");
    writeFileSync(join(w.sb.root, "rsa_known_hosts"), `[127.0.0.1]:${s.port} ${rsaType} ${rsaB64}\n`);
    // The jump server's key filed under the target's name: a changed key.
    writeFileSync(
      join(w.sb.root, "changed_known_hosts"),
      `[127.0.0.1]:${s.port} ${jump.hostKeyType} ${jump.hostKeyBase64}\n`,
    );
  });
  afterAll(async () => {
    if (agentPid > 0) killQuietly(agentPid, "SIGTERM");
    await jump?.stop();
    await w?.close();
  });
}

describe.if(runE2e)("ssh connection", () => {
  const submit = (host: string, argv: string[], env: Record<string, string> = {}) =>
    w.sb.run(["submit", "--json", "--backend", "ssh", "--host", host, "--", ...argv], { env });

  test("an unknown host key is refused with how to check its fingerprint (exit 7); nothing runs", () => {
    const r = submit("unknown-key", ["touch", "should-not-exist"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("is not known");
    expect(r.stderr).toContain(`ssh-keyscan -t ed25519 -p ${w.sshd.port} 127.0.0.1 | ssh-keygen -lf -`);
    // the alias: OpenSSH reads the same User and Port for it (`ssh -p PORT 127.0.0.1` would log in as the wrong user)
    expect(r.stderr).toContain("connect once with ssh unknown-key true,");
    const resolved = Bun.spawnSync([
      "ssh",
      "-F",
      join(w.sshDir, "config"),
      "-G",
      "unknown-key",
    ]).stdout.toString();
    expect(resolved).toContain("user awl-dash\n");
    expect(resolved).toContain(`port ${w.sshd.port}\n`);
    expect(r.stderr).not.toContain(">>");
    expect(r.stderr).toMatch(/SHA256:[A-Za-z0-9+/]{43}/);
  });

  test("a changed host key is refused loudly", () => {
    const r = submit("changed-key", ["true"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("REMOTE HOST IDENTIFICATION HAS CHANGED");
    expect(r.stderr).toContain("ssh-keygen -R");
  });

  test("StrictHostKeyChecking accept-new records an unknown key and connects", () => {
    const r = submit("accept-new", ["true"]);
    expect(r.code).toBe(0);
    expect(readFileSync(join(w.sb.root, "new_known_hosts"), "utf8")).toContain(w.sshd.hostKeyBase64);
  });

  test("accept-new refuses a key of another type than the known one, as OpenSSH does, and adds nothing", () => {
    const file = join(w.sb.root, "rsa_known_hosts");
    const before = readFileSync(file, "utf8");
    const r = submit("other-type", ["touch", "should-not-exist"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("REMOTE HOST IDENTIFICATION HAS CHANGED");
    expect(r.stderr).toContain("different ssh-rsa key");
    expect(readFileSync(file, "utf8")).toBe(before);
    // The real client with the same config refuses the same way.
    const ssh = Bun.spawnSync(
      ["ssh", "-F", join(w.sshDir, "config"), "-o", "BatchMode=yes", "other-type", "true"],
      { stdin: "ignore", env: { ...process.env, HOME: w.sb.root } },
    );
    expect(ssh.exitCode).toBe(255);
    expect(ssh.stderr.toString()).toContain("REMOTE HOST IDENTIFICATION HAS CHANGED");
  });

  test("accept-new under HashKnownHosts yes writes a hashed entry that OpenSSH finds", () => {
    const r = submit("hashed-new", ["true"]);
    expect(r.code).toBe(0);
    const file = join(w.sb.root, "hashed_known_hosts");
    const text = readFileSync(file, "utf8");
    expect(text).toStartWith("|1|");
    expect(text).not.toContain("127.0.0.1");
    const found = sh(["ssh-keygen", "-F", `[127.0.0.1]:${w.sshd.port}`, "-f", file]);
    expect(found).toContain(w.sshd.hostKeyBase64);
  });

  test("an encrypted key without an agent is refused with a clear message", () => {
    const r = submit("enc", ["true"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("is encrypted");
    expect(r.stderr).toContain(`ssh-add ${encKey}`);
  });

  test("the same key held by ssh-agent authenticates", () => {
    const r = submit("enc", ["sh", "-c", "echo via-agent"], { SSH_AUTH_SOCK: agentSock });
    expect(r.code).toBe(0);
    const done = w.sb.run(["wait", "--json", r.json.job_id], { env: { SSH_AUTH_SOCK: agentSock } });
    expect(done.json.stdout_tail).toBe("via-agent\n");
  });

  test("ProxyJump through a second sshd", () => {
    const r = submit("behind", ["sh", "-c", "echo behind-the-jump"]);
    expect(r.code).toBe(0);
    const done = w.sb.run(["wait", "--json", r.json.job_id]);
    expect(done.json.state).toBe("succeeded");
    expect(done.json.stdout_tail).toBe("behind-the-jump\n");
  });

  test("doctor --host on a host with no job directory yet passes every check and exits 0", () => {
    // The first doctor a user runs: remote_job_dir does not exist until doctor's own setup makes it.
    const dirName = `.awaitless-doctor-${process.pid}-${Date.now()}`;
    const file = join(w.sb.root, "config-fresh.toml");
    writeFileSync(file, `[hosts.fresh]\nhostname = "box-dash"\nremote_job_dir = "~/${dirName}"\n`);
    const remote = join("/home", w.sshd.users.dash, dirName);
    try {
      const d = w.sb.run(["doctor", "--json", "--host", "fresh"], { env: { AWAITLESS_CONFIG: file } });
      const checks = d.json.checks as { check: string; ok: boolean; detail: string }[];
      expect(checks.filter((c) => !c.ok)).toEqual([]);
      expect(checks.find((c) => c.check === "fresh: sh and utilities")?.detail).toContain("sh works");
      expect(d.code).toBe(0);
    } finally {
      rmSync(remote, { recursive: true, force: true });
    }
  }, 30_000);

  test("an unreachable host leaves the job's state alone and says so; the job keeps running", async () => {
    const lone = await startSshd({ users: ["awl-dash"] });
    let dir = "";
    try {
      appendFileSync(join(w.sshDir, "config"), hostBlock("lone", lone, "awl-dash"));
      appendFileSync(join(w.sshDir, "known_hosts"), `${lone.hostKeyLine}\n`);
      const r = submit("lone", ["sleep", "30"]);
      expect(r.code).toBe(0);
      const id = r.json.job_id as string;
      dir = w.sb.status(id).backend_id.remote_dir;
      await lone.stop();
      const st = w.sb.run(["status", "--json", id]);
      expect(st.code).toBe(7);
      expect(st.json.state).toBe("running");
      expect(st.json.host_unreachable).toContain("unreachable");
      expect(st.json.status_message).toContain("unreachable");
      const started = await until("started", () => remoteFile(dir, "started"));
      expect(pidAlive(Number(/^wrapper_pid=(\d+)$/m.exec(started)?.[1]))).toBe(true);
    } finally {
      await lone.stop();
      const started = dir ? remoteFile(dir, "started") : null;
      if (started) {
        const wp = Number(/^wrapper_pid=(\d+)$/m.exec(started)?.[1]);
        const pgid = Number(/^pgid=(\d+)$/m.exec(started)?.[1]);
        for (const p of [wp, ...groupMembers(pgid)]) killQuietly(p);
      }
    }
  }, 30_000);
});
