// IdentitiesOnly yes through the compiled binary, against a private sshd that allows one authentication attempt
// (MaxAuthTries 1) and a real ssh-agent holding an unauthorized key first: only the IdentityFile's key may be offered.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability, type SshdHandle, sshdAvailable, startSshd } from "../helpers/sshd.ts";

const runE2e = gateOnAvailability("SSH IdentitiesOnly e2e tests (private OpenSSH server)", sshdAvailable());

let sshd: SshdHandle;
let sb: Sandbox;
let agentPid = 0;
let agentSock = "";
let encKey = "";
let otherEncKey = "";

function sh(argv: string[], env: Record<string, string> = {}): string {
  const p = Bun.spawnSync(argv, { env: { ...process.env, ...env }, stdin: "ignore" });
  if (p.exitCode !== 0) throw new Error(`${argv.join(" ")}: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

function hostBlock(alias: string, identityFile: string, identitiesOnly: "yes" | "no"): string {
  return [
    `Host ${alias}`,
    "  HostName 127.0.0.1",
    `  Port ${sshd.port}`,
    "  User awl-dash",
    `  IdentityFile ${identityFile}`,
    `  IdentitiesOnly ${identitiesOnly}`,
    "",
  ].join("\n");
}

if (runE2e) {
  beforeAll(async () => {
    // One failed attempt ends the connection: an agent that offers a wrong key first never gets to the right one.
    sshd = await startSshd({ users: ["awl-dash"], extraConfig: ["MaxAuthTries 1"] });
    sb = new Sandbox();
    const keys = join(sb.root, "keys");
    mkdirSync(keys, { mode: 0o700 });
    // A key sshd does not accept, and the authorized one, encrypted (its public half in enc_ed25519.pub).
    const wrongKey = join(keys, "wrong_ed25519");
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", wrongKey]);
    encKey = join(keys, "enc_ed25519");
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret-pass", "-f", encKey]);
    appendFileSync(join(sshd.dir, "authorized_keys", "awl-dash"), readFileSync(`${encKey}.pub`));
    // The same encrypted key without a .pub next to it: OpenSSH reads the public half from the key file itself.
    const noPubKey = join(keys, "nopub_ed25519");
    copyFileSync(encKey, noPubKey);
    // An encrypted key the agent does not hold.
    otherEncKey = join(keys, "other_ed25519");
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "other-pass", "-f", otherEncKey]);

    agentSock = join(sb.root, "agent.sock");
    const out = sh(["ssh-agent", "-a", agentSock, "-s"]);
    agentPid = Number(/SSH_AGENT_PID=(\d+)/.exec(out)?.[1]);
    const askpass = join(sb.root, "askpass.sh");
    writeFileSync(askpass, "#!/bin/sh\necho secret-pass\n", { mode: 0o700 });
    // ssh-agent lists keys in the order they were added: the wrong one is offered first.
    sh(["ssh-add", wrongKey], { SSH_AUTH_SOCK: agentSock });
    sh(["ssh-add", encKey], {
      SSH_AUTH_SOCK: agentSock,
      SSH_ASKPASS: askpass,
      SSH_ASKPASS_REQUIRE: "force",
      DISPLAY: ":0",
    });
    const listed = sh(["ssh-add", "-L"], { SSH_AUTH_SOCK: agentSock }).trim().split("\n");
    expect(listed.length).toBe(2);
    expect(listed[0]).toBe(readFileSync(`${wrongKey}.pub`, "utf8").trim());

    const sshDir = join(sb.root, ".ssh");
    mkdirSync(sshDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(sshDir, "config"),
      [
        hostBlock("only", encKey, "yes"),
        hostBlock("all", encKey, "no"),
        hostBlock("only-nopub", noPubKey, "yes"),
        hostBlock("only-other", otherEncKey, "yes"),
      ].join(""),
    );
    writeFileSync(join(sshDir, "known_hosts"), `${sshd.hostKeyLine}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    if (agentPid > 0) killQuietly(agentPid, "SIGTERM");
    await sshd?.stop();
    sb?.cleanup();
  });
}

describe.if(runE2e)("IdentitiesOnly yes (ssh2 transport)", () => {
  const env = () => ({ SSH_AUTH_SOCK: agentSock });
  const submit = (host: string, argv: string[]) =>
    sb.run(["submit", "--json", "--backend", "ssh", "--host", host, "--", ...argv], { env: env() });

  test("only the IdentityFile's key is taken from the agent: the job runs", () => {
    const r = submit("only", ["sh", "-c", "echo identities-only"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const done = sb.run(["wait", "--json", r.json.job_id], { env: env() });
    expect(done.json.state).toBe("succeeded");
    expect(done.json.stdout_tail).toBe("identities-only\n");
  });

  test("with IdentitiesOnly no every agent key is offered, and the wrong one first uses up MaxAuthTries", async () => {
    const r = submit("all", ["true"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("authentication as awl-dash@all failed");
    expect(r.stderr).toContain("too many authentication failures");
    expect(r.stderr).toContain("set IdentitiesOnly yes");
    await until("sshd to log the exceeded attempts", () =>
      sshd.log().includes("maximum authentication attempts exceeded for awl-dash"),
    );
  });

  test("an encrypted key file without .pub: its public half is read from the file", () => {
    const r = submit("only-nopub", ["sh", "-c", "echo no-pub"]);
    expect(r.code).toBe(0);
    const done = sb.run(["wait", "--json", r.json.job_id], { env: env() });
    expect(done.json.stdout_tail).toBe("no-pub\n");
  });

  test("an IdentityFile the agent does not hold: no agent key is offered, and the error says why", () => {
    const r = submit("only-other", ["true"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("only keys of IdentityFile, IdentitiesOnly yes");
    expect(r.stderr).toContain(`ssh-add ${otherEncKey}`);
  });
});
