// A private OpenSSH sshd for e2e tests: own config, host key, client key and authorized_keys in a temp dir,
// listening on 127.0.0.1 on a free port, started and stopped by PID; plus the non-root test users it serves.

import { test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { until } from "./until.ts";

export interface Availability {
  ok: boolean;
  why: string;
}

/** Test users: login shell dash, and login shell busybox sh. */
export const TEST_USERS = { dash: "awl-dash", busybox: "awl-busybox" } as const;
export const SSHD_BINARY = "/usr/sbin/sshd";
/** busybox picks its applet from argv[0], so its login shell is a symlink named `sh`. */
export const BUSYBOX_SH = "/usr/local/lib/awaitless-test/sh";
const ENABLE_HINT = "to enable: `apt-get install openssh-server busybox dash` and run the tests as root";

// Returns whether to run a group of tests; when not, skips with a message, or fails under AWAITLESS_REQUIRE_ALL=1.
export function gateOnAvailability(what: string, avail: Availability): boolean {
  if (avail.ok) return true;
  if (process.env.AWAITLESS_REQUIRE_ALL === "1") {
    test(`${what} can run (AWAITLESS_REQUIRE_ALL=1)`, () => {
      throw new Error(`${what} cannot run: ${avail.why}`);
    });
  } else {
    console.warn(
      `[skip] ${what}: ${avail.why}. Set AWAITLESS_REQUIRE_ALL=1 to turn this skip into a failure.`,
    );
  }
  return false;
}

export function sshdAvailable(): Availability {
  const missing: string[] = [];
  if (process.platform !== "linux")
    return { ok: false, why: `the sshd harness needs Linux (${ENABLE_HINT})` };
  if (!existsSync(SSHD_BINARY)) missing.push(`${SSHD_BINARY} (openssh-server)`);
  for (const tool of ["ssh-keygen", "dash", "busybox", "useradd"]) {
    if (Bun.which(tool) === null) missing.push(tool);
  }
  if (missing.length > 0) return { ok: false, why: `missing ${missing.join(", ")}; ${ENABLE_HINT}` };
  if (process.getuid?.() !== 0) return { ok: false, why: `not running as root; ${ENABLE_HINT}` };
  return { ok: true, why: "" };
}

function run(argv: string[]): string {
  const proc = Bun.spawnSync(argv, { stdin: "ignore" });
  if (proc.exitCode !== 0) {
    throw new Error(`${argv.join(" ")} failed (exit ${proc.exitCode}): ${proc.stderr.toString().trim()}`);
  }
  return proc.stdout.toString();
}

// useradd/usermod fail while another process holds the passwd lock; retry those for a while.
export function runLocked(argv: string[]): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const proc = Bun.spawnSync(argv, { stdin: "ignore" });
    const stderr = proc.stderr.toString();
    if (proc.exitCode === 0) return;
    if (!/lock/i.test(stderr) || Date.now() > deadline) {
      throw new Error(`${argv.join(" ")} failed (exit ${proc.exitCode}): ${stderr.trim()}`);
    }
    Bun.sleepSync(50);
  }
}

function shadowPassword(name: string): string | undefined {
  const line = readFileSync("/etc/shadow", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  return line?.split(":")[1];
}

function userShell(name: string): string | undefined {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}:`));
  return line?.split(":")[6];
}

// Creates (idempotently) the test users, their home dirs, and busybox's `sh` link listed in /etc/shells.
export function ensureTestUsers(): void {
  const busybox = Bun.which("busybox");
  if (busybox === null) throw new Error(`busybox is not installed; ${ENABLE_HINT}`);
  if (!existsSync(BUSYBOX_SH)) {
    mkdirSync(dirname(BUSYBOX_SH), { recursive: true });
    try {
      symlinkSync(busybox, BUSYBOX_SH);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  const dash = existsSync("/bin/dash") ? "/bin/dash" : (Bun.which("dash") ?? "/bin/dash");
  const shells = readFileSync("/etc/shells", "utf8");
  if (!shells.split("\n").includes(BUSYBOX_SH)) {
    writeFileSync("/etc/shells", `${shells.endsWith("\n") ? shells : `${shells}\n`}${BUSYBOX_SH}\n`);
  }
  for (const [name, shell] of [
    [TEST_USERS.dash, dash],
    [TEST_USERS.busybox, BUSYBOX_SH],
  ] as const) {
    const current = userShell(name);
    if (current === undefined) {
      try {
        runLocked(["useradd", "--create-home", "--shell", shell, name]);
      } catch (err) {
        if (userShell(name) === undefined) throw err; // else another test process created it meanwhile
      }
    } else if (current !== shell) {
      runLocked(["usermod", "--shell", shell, name]);
    }
    // A "!" password means "locked" to sshd when PAM is off; "*" allows key logins only.
    if (shadowPassword(name) !== "*") runLocked(["usermod", "--password", "*", name]);
  }
}

export interface StartSshdOptions {
  /** Users allowed to log in with the client key; default both test users. */
  users?: string[];
  /** Extra sshd_config lines (e.g. "MaxSessions 4"). */
  extraConfig?: string[];
}

export interface SshdHandle {
  host: "127.0.0.1";
  port: number;
  pid: number;
  dir: string;
  /** A known_hosts line for this server: `[127.0.0.1]:PORT ssh-ed25519 AAAA…`. */
  hostKeyLine: string;
  hostKeyType: string;
  hostKeyBase64: string;
  /** Unencrypted ed25519 private key authorized for every user. */
  clientKeyPath: string;
  users: { dash: string; busybox: string };
  /** sshd's log so far (`-E` into a file in `dir`: a pipe the test's event loop reads would block sshd whenever a
   * test spends a while in a synchronous spawn). */
  log(): string;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

function sshdConfig(dir: string, port: number, users: string[], extra: string[]): string {
  return [
    `Port ${port}`,
    "ListenAddress 127.0.0.1",
    `HostKey ${join(dir, "ssh_host_ed25519_key")}`,
    "PidFile none",
    `AuthorizedKeysFile ${join(dir, "authorized_keys", "%u")}`,
    // The key files live under the system temp dir (mode 1777), which StrictModes rejects.
    "StrictModes no",
    "UsePAM no",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "PubkeyAuthentication yes",
    "PermitRootLogin no",
    `AllowUsers ${users.join(" ")}`,
    "Subsystem sftp internal-sftp",
    "LogLevel VERBOSE",
    // MaxStartups, MaxSessions and the rest stay at OpenSSH's defaults, as on the hosts users have.
    ...extra,
    "",
  ].join("\n");
}

export async function startSshd(opts: StartSshdOptions = {}): Promise<SshdHandle> {
  const avail = sshdAvailable();
  if (!avail.ok) throw new Error(`cannot start sshd: ${avail.why}`);
  ensureTestUsers();
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 }); // privilege-separation dir sshd insists on
  const users = opts.users ?? [TEST_USERS.dash, TEST_USERS.busybox];
  const dir = mkdtempSync(join(tmpdir(), "awl-sshd-"));
  chmodSync(dir, 0o755); // sshd reads authorized_keys as the logging-in user
  const hostKey = join(dir, "ssh_host_ed25519_key");
  const clientKeyPath = join(dir, "client_ed25519");
  run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "awaitless-test-host", "-f", hostKey]);
  run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "awaitless-test-client", "-f", clientKeyPath]);
  mkdirSync(join(dir, "authorized_keys"), { mode: 0o755 });
  const clientPub = readFileSync(`${clientKeyPath}.pub`, "utf8");
  for (const user of users) writeFileSync(join(dir, "authorized_keys", user), clientPub, { mode: 0o644 });
  const [hostKeyType = "", hostKeyBase64 = ""] = readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/);

  for (let attempt = 1; ; attempt++) {
    const port = freePort();
    const configPath = join(dir, "sshd_config");
    writeFileSync(configPath, sshdConfig(dir, port, users, opts.extraConfig ?? []));
    const logPath = join(dir, `sshd-${attempt}.log`);
    const proc = Bun.spawn([SSHD_BINARY, "-D", "-E", logPath, "-f", configPath], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const logText = () => readLog(logPath);
    const listening = await waitFor(
      () => logText().includes(`Server listening on 127.0.0.1 port ${port}`) || proc.exitCode !== null,
      15_000,
    );
    if (listening && proc.exitCode === null) {
      const stop = async () => {
        await stopProcessTree(proc);
        rmSync(dir, { recursive: true, force: true });
      };
      return {
        host: "127.0.0.1",
        port,
        pid: proc.pid,
        dir,
        hostKeyLine: `[127.0.0.1]:${port} ${hostKeyType} ${hostKeyBase64}`,
        hostKeyType,
        hostKeyBase64,
        clientKeyPath,
        users: { dash: TEST_USERS.dash, busybox: TEST_USERS.busybox },
        log: logText,
        stop,
        [Symbol.asyncDispose]: stop,
      };
    }
    await stopProcessTree(proc);
    const text = logText();
    if (attempt >= 5 || !text.includes("Address already in use")) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start listening on 127.0.0.1:${port}:\n${text}`);
    }
  }
}

/** A log file's text so far ("" before sshd creates it or after the directory is removed). */
export function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  return until("sshd", cond, timeoutMs, 20).then(
    () => true,
    () => false,
  );
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Descendants via /proc (sshd's per-connection children outlive the listener otherwise).
export function descendantPids(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // the process exited while we looked
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

// TERM the listener and every descendant by PID, then KILL whatever is left after a deadline.
async function stopProcessTree(proc: Subprocess): Promise<void> {
  const pids = [proc.pid, ...descendantPids(proc.pid)];
  for (const p of pids) {
    try {
      process.kill(p, "SIGTERM");
    } catch {
      // already gone
    }
  }
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;
  const done = await waitFor(() => exited() && pids.every((p) => p === proc.pid || !isAlive(p)), 5_000);
  if (!done) {
    for (const p of pids) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await proc.exited;
  }
}
