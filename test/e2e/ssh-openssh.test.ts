// transport = "openssh" end to end: the real OpenSSH client multiplexed through a ControlMaster socket against the
// private sshd — a master the user opened (reused: no new logins), one we open in BatchMode, a master that dies
// mid-wait, an unknown host key in BatchMode, and doctor naming the transport and why.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultControlDir } from "../../src/ssh/control-dir.ts";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { remoteScripts, type SshWorld, sshWorld } from "./ssh-fixture.ts";

const avail = sshdAvailable();
const runE2e = gateOnAvailability(
  "OpenSSH transport e2e tests (ssh client + private sshd)",
  avail.ok && Bun.which("ssh") === null
    ? { ok: false, why: "the OpenSSH client `ssh` is missing; run test/infra/sshd-setup.sh" }
    : avail,
);

let w: SshWorld;
let cfg = "";

/** Runs the OpenSSH client with the sandbox's config (as awaitless does, via -F). */
function ssh(args: string[]): { code: number; out: string } {
  const p = Bun.spawnSync(["ssh", "-F", cfg, ...args], { stdin: "ignore" });
  return { code: p.exitCode ?? -1, out: p.stdout.toString() + p.stderr.toString() };
}

function masterPid(alias: string, controlPath?: string): number | null {
  const r = ssh([...(controlPath ? ["-o", `ControlPath=${controlPath}`] : []), "-O", "check", alias]);
  const m = /pid=(\d+)/.exec(r.out);
  return r.code === 0 && m ? Number(m[1]) : null;
}

const ourControlPath = () => join(defaultControlDir(w.sb.env), "%C");
let markerKey = "";
let markerPrint = "";
let markers = 0;
const accepted = () => w.sshd.log().match(/^Accepted publickey .*$/gm) ?? [];
/** Logins sshd logged, not counting the marker logins. */
const logins = () => accepted().filter((l) => !l.includes(markerPrint)).length;

/**
 * The login count once sshd's log (read asynchronously) is complete: a marker login with its own key is made, and
 * once the log shows it, every earlier login is in the log too.
 */
async function settledLogins(): Promise<number> {
  const r = ssh(["-i", markerKey, "-o", "ControlPath=none", "-o", "BatchMode=yes", "ossh-user", "true"]);
  expect(r.code).toBe(0);
  markers++;
  await until("sshd to log the marker login", () => accepted().length - logins() >= markers);
  return logins();
}

if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    cfg = join(w.sshDir, "config");
    // Another user got to the old predictable socket directory <TMPDIR>/awl-ssh-<uid> first: it must not matter.
    const tmp = join(w.sb.root, "tmp");
    mkdirSync(join(tmp, `awl-ssh-${process.getuid?.()}`), { recursive: true, mode: 0o755 });
    chownSync(join(tmp, `awl-ssh-${process.getuid?.()}`), 65534, 65534);
    w.sb.env.TMPDIR = tmp;
    markerKey = join(w.sb.root, "marker_key");
    Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", markerKey]);
    appendFileSync(join(w.sshd.dir, "authorized_keys", "awl-dash"), readFileSync(`${markerKey}.pub`));
    markerPrint = Bun.spawnSync(["ssh-keygen", "-lf", markerKey]).stdout.toString().split(" ")[1] ?? "";
    const known = join(w.sshDir, "known_hosts");
    const block = (alias: string, extra: string[]) =>
      [
        `Host ${alias}`,
        "  HostName 127.0.0.1",
        `  Port ${w.sshd.port}`,
        "  User awl-dash",
        `  IdentityFile ${w.sshd.clientKeyPath}`,
        "  IdentitiesOnly yes",
        ...extra.map((l) => `  ${l}`),
        "",
      ].join("\n");
    // ssh reads ~ from the passwd entry, not $HOME: name the sandbox's known_hosts explicitly.
    appendFileSync(
      cfg,
      block("ossh-user", [`ControlPath ${join(w.sb.root, "cm-%C")}`, `UserKnownHostsFile ${known}`]) +
        block("ossh-auto", [`UserKnownHostsFile ${known}`, "ServerAliveInterval 1"]) +
        block("ossh-race", [`ControlPath ${join(w.sb.root, "cm-race-%C")}`, `UserKnownHostsFile ${known}`]) +
        block("ossh-unknown", [
          // its own socket: the default (%C) would be ossh-auto's master (same host, port and user)
          `ControlPath ${join(w.sb.root, "cm-unknown-%C")}`,
          `UserKnownHostsFile ${join(w.sb.root, "none_known")}`,
        ]),
    );
    w.sb.writeConfig(
      ["ossh-user", "ossh-auto", "ossh-race", "ossh-unknown"]
        .map((h) => `[hosts.${h}]\ntransport = "openssh"\n`)
        .join("\n"),
    );
  });
  afterAll(async () => {
    // Ask each master to exit (it removes its socket), then make sure by PID.
    const masters: [string, string | undefined][] = [
      ["ossh-user", undefined],
      ["ossh-race", undefined],
      ["ossh-auto", ourControlPath()],
    ];
    for (const [alias, path] of masters) {
      const pid = masterPid(alias, path);
      if (pid === null) continue;
      ssh([...(path ? ["-o", `ControlPath=${path}`] : []), "-O", "exit", alias]);
      await until("the master to exit", () => !pidAlive(pid)).catch(() => killQuietly(pid));
    }
    await w?.close();
  });
}

describe.if(runE2e)("ssh transport = openssh", () => {
  const submit = (host: string, argv: string[], flags: string[] = []) =>
    w.sb.run(["submit", "--json", "--backend", "ssh", "--host", host, ...flags, "--", ...argv]);

  test("a master the user opened is reused: submit → wait → result and artifact, no new login", async () => {
    const open = ssh([
      "-o",
      "ControlMaster=yes",
      "-o",
      "ControlPersist=120",
      "-o",
      "BatchMode=yes",
      "-N",
      "-f",
      "ossh-user",
    ]);
    expect(open.code).toBe(0);
    expect(masterPid("ossh-user")).toBeGreaterThan(0);
    const before = await settledLogins();
    const r = submit(
      "ossh-user",
      ["sh", "-c", 'printf \'{"via": "openssh"}\' > o.json; echo "it\'s $1"', "sh", "a 'quoted' $arg"],
      ["--artifact", "o.json"],
    );
    expect(r.code).toBe(0);
    const done = w.sb.run(["wait", "--json", r.json.job_id]);
    expect(done.code).toBe(0);
    const res = done.json;
    expect(res.state).toBe("succeeded");
    expect(res.stdout_tail).toBe("it's a 'quoted' $arg\n");
    expect(res.artifacts[0].sha256).toBe(
      new Bun.CryptoHasher("sha256").update('{"via": "openssh"}').digest("hex"),
    );
    expect(res.parsed_results).toEqual({ via: "openssh" });
    expect((await settledLogins()) - before).toBe(0);
  }, 30_000);

  test("without a master, one is opened in BatchMode and shared by later processes", async () => {
    const before = await settledLogins();
    const r = submit("ossh-auto", ["sh", "-c", "echo auto"]);
    expect(r.code).toBe(0);
    expect(masterPid("ossh-auto", ourControlPath())).toBeGreaterThan(0);
    const done = w.sb.run(["wait", "--json", r.json.job_id]);
    expect(done.json.stdout_tail).toBe("auto\n");
    expect(w.sb.run(["status", "--json", r.json.job_id]).json.state).toBe("succeeded");
    expect((await settledLogins()) - before).toBe(1);
  }, 30_000);

  test("our control socket is in a private directory under the data dir, whatever another user made in TMPDIR", () => {
    const dir = join(w.sb.dataDir, "ssh");
    expect(defaultControlDir(w.sb.env)).toBe(dir);
    const st = lstatSync(dir);
    expect(st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o700).toBe(true);
    expect(readdirSync(dir).some((name) => lstatSync(join(dir, name)).isSocket())).toBe(true);
  });

  test("processes starting at once share one new master (one login)", async () => {
    const before = await settledLogins();
    const runs = await Promise.all(
      [1, 2, 3].map((i) =>
        w.sb.runAsync(["submit", "--json", "--backend", "ssh", "--host", "ossh-race", "--", "echo", `r${i}`]),
      ),
    );
    for (const r of runs) expect(r.code).toBe(0);
    expect(masterPid("ossh-race")).toBeGreaterThan(0);
    expect((await settledLogins()) - before).toBe(1);
  }, 30_000);

  test("the master dies mid-wait: the same wait opens a new one and completes", async () => {
    const r = submit("ossh-auto", ["sh", "-c", "sleep 3; echo after-master"]);
    expect(r.code).toBe(0);
    const first = masterPid("ossh-auto", ourControlPath());
    expect(first).toBeGreaterThan(0);
    const waiter = w.sb.spawn(["wait", "--json", r.json.job_id]);
    const before = await settledLogins();
    // The waiter's watch loop runs as `sh -s` under sshd (a channel of the master's connection).
    await until("the waiter's remote channel", () => remoteScripts(w.sshd).length > 0);
    killQuietly(first as number);
    await until("the master to exit", () => !pidAlive(first as number));
    const [stdout, stderr, code] = await Promise.all([
      new Response(waiter.stdout).text(),
      new Response(waiter.stderr).text(),
      waiter.exited,
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(stdout).stdout_tail).toBe("after-master\n");
    const second = masterPid("ossh-auto", ourControlPath());
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    expect((await settledLogins()) - before).toBe(1);
  }, 30_000);

  test("an unknown host key in BatchMode is refused (exit 7) with the command that opens the master", () => {
    const r = submit("ossh-unknown", ["true"]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("Host key verification failed");
    expect(r.stderr).toContain("ControlMaster=yes");
    expect(r.stderr).toContain("ossh-unknown");
  });

  test("doctor names the transport, the socket and why", () => {
    const d = w.sb.run(["doctor", "--json", "--host", "ossh-user"]);
    const checks = d.json.checks as { check: string; ok: boolean; detail: string }[];
    const byName = (n: string) => checks.find((c) => c.check === `ossh-user: ${n}`);
    expect(byName("resolution")?.detail).toContain(`awl-dash@127.0.0.1:${w.sshd.port}`);
    const t = byName("transport");
    expect(t?.ok).toBe(true);
    expect(t?.detail).toContain('sets transport = "openssh"');
    expect(t?.detail).toContain(join(w.sb.root, "cm-"));
    expect(t?.detail).toContain("master running");
    expect(byName("sh and utilities")?.ok).toBe(true);
    expect(byName("remote job directory")?.ok).toBe(true);
  }, 30_000);

  test("an 0.8 host with gssapi_authentication = true is reached with the system ssh client, as 0.8 did", async () => {
    // an Awaitless 0.8 host entry: no transport (ossh-auto's master, same host, port and user, is shared)
    const file = join(w.sb.root, "config-08.toml");
    await Bun.write(
      file,
      '[hosts.gss08]\nhostname = "ossh-auto"\ngssapi_authentication = true\nconnect_timeout = 8\noperation_timeout = 20\n',
    );
    const env = { AWAITLESS_CONFIG: file };
    const argv = [
      "submit",
      "--json",
      "--backend",
      "ssh",
      "--host",
      "gss08",
      "--",
      "sh",
      "-c",
      "echo gss-$((6*7))",
    ];
    const r = w.sb.run(argv, { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("gssapi_authentication = true: gss08 is reached with the system ssh client");
    const done = w.sb.run(["wait", "--json", r.json.job_id], { env });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.stringify(done.json)).toContain("gss-42");
    const d = w.sb.run(["doctor", "--json", "--host", "gss08"], { env });
    const transport = (d.json.checks as { check: string; detail: string }[]).find(
      (c) => c.check === "gss08: transport",
    );
    expect(transport?.detail).toContain("system OpenSSH client");
  }, 60_000);
});
