// A private network namespace joined to this one by a veth pair (its own /30 in 10.200.0.0/16), with an sshd
// inside it, so tests can cut the network under a running job (`down()`) and restore it (`up()`). Everything
// made here (namespace, links, processes) is removed in `cleanup()`, processes by PID.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import {
  type Availability,
  descendantPids,
  ensureTestUsers,
  isAlive,
  readLog,
  SSHD_BINARY,
  sshdAvailable,
} from "./sshd.ts";

const HINT =
  "to enable: run the tests as root with iproute2 installed (`apt-get install iproute2`, see test/infra/sshd-setup.sh)";

export function netnsAvailable(): Availability {
  const sshd = sshdAvailable();
  if (!sshd.ok) return sshd;
  if (Bun.which("ip") === null) return { ok: false, why: `the \`ip\` command is missing; ${HINT}` };
  const probe = Bun.spawnSync(["ip", "netns", "list"], { stdin: "ignore" });
  if (probe.exitCode !== 0) {
    return { ok: false, why: `\`ip netns list\` failed: ${probe.stderr.toString().trim()}; ${HINT}` };
  }
  return { ok: true, why: "" };
}

function ip(args: string[]): void {
  const p = Bun.spawnSync(["ip", ...args], { stdin: "ignore" });
  if (p.exitCode !== 0) throw new Error(`ip ${args.join(" ")} failed: ${p.stderr.toString().trim()}`);
}

function quietIp(args: string[]): void {
  Bun.spawnSync(["ip", ...args], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
}

export interface NetnsSshd {
  /** sshd's address inside the namespace, and its port. */
  host: string;
  port: number;
  pid: number;
  hostKeyLine: string;
  clientKeyPath: string;
  log(): string;
}

export interface Netns {
  name: string;
  /** The veth end in this (the root) namespace; setting it down partitions the namespace. */
  hostLink: string;
  hostAddr: string;
  nsAddr: string;
  /** Starts a private sshd inside the namespace for `users` (default the dash test user). */
  startSshd(users?: string[]): Promise<NetnsSshd>;
  down(): void;
  up(): void;
  /** Stops every process started here by PID, then deletes the links and the namespace. */
  cleanup(): Promise<void>;
}

// A /30 in 10.200.0.0/16 that no interface here uses yet.
function freeSubnet(): { hostAddr: string; nsAddr: string } {
  const used = Bun.spawnSync(["ip", "-o", "-4", "addr", "show"]).stdout.toString();
  for (let i = 0; i < 200; i++) {
    const third = Math.floor(Math.random() * 256);
    const base = Math.floor(Math.random() * 64) * 4;
    if (used.includes(`10.200.${third}.${base + 1}/`)) continue;
    return { hostAddr: `10.200.${third}.${base + 1}`, nsAddr: `10.200.${third}.${base + 2}` };
  }
  throw new Error("no free /30 in 10.200.0.0/16");
}

export function createNetns(): Netns {
  const tag = `${process.pid % 10_000}${Math.random().toString(36).slice(2, 6)}`;
  const name = `awl-ns-${tag}`;
  const hostLink = `awlh${tag}`.slice(0, 15);
  const nsLink = `awln${tag}`.slice(0, 15);
  const { hostAddr, nsAddr } = freeSubnet();
  const procs: Subprocess[] = [];
  const dirs: string[] = [];
  const cleanup = async () => {
    for (const p of procs) await stopTree(p);
    quietIp(["link", "del", hostLink]); // deletes its peer too
    quietIp(["netns", "del", name]);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  try {
    ip(["netns", "add", name]);
    ip(["link", "add", hostLink, "type", "veth", "peer", "name", nsLink]);
    ip(["link", "set", nsLink, "netns", name]);
    ip(["addr", "add", `${hostAddr}/30`, "dev", hostLink]);
    ip(["link", "set", hostLink, "up"]);
    ip(["netns", "exec", name, "ip", "addr", "add", `${nsAddr}/30`, "dev", nsLink]);
    ip(["netns", "exec", name, "ip", "link", "set", nsLink, "up"]);
    ip(["netns", "exec", name, "ip", "link", "set", "lo", "up"]);
  } catch (e) {
    void cleanup();
    throw e;
  }
  return {
    name,
    hostLink,
    hostAddr,
    nsAddr,
    async startSshd(users = ["awl-dash"]) {
      const s = await startNsSshd(name, nsAddr, users);
      procs.push(s.proc);
      dirs.push(s.dir);
      return s.handle;
    },
    down: () => ip(["link", "set", hostLink, "down"]),
    up: () => ip(["link", "set", hostLink, "up"]),
    cleanup,
  };
}

function keygen(path: string, comment: string): void {
  const p = Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path]);
  if (p.exitCode !== 0) throw new Error(`ssh-keygen failed: ${p.stderr.toString()}`);
}

async function startNsSshd(
  ns: string,
  addr: string,
  users: string[],
): Promise<{ proc: Subprocess; dir: string; handle: NetnsSshd }> {
  ensureTestUsers();
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = mkdtempSync(join(tmpdir(), "awl-nssshd-"));
  chmodSync(dir, 0o755); // sshd reads authorized_keys as the logging-in user
  const hostKey = join(dir, "host_key");
  const clientKeyPath = join(dir, "client_key");
  keygen(hostKey, "awaitless-netns-host");
  keygen(clientKeyPath, "awaitless-netns-client");
  mkdirSync(join(dir, "authorized_keys"), { mode: 0o755 });
  for (const u of users) {
    writeFileSync(join(dir, "authorized_keys", u), readFileSync(`${clientKeyPath}.pub`), { mode: 0o644 });
  }
  const port = 2222; // the namespace is ours alone
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${addr}`,
      `HostKey ${hostKey}`,
      "PidFile none",
      `AuthorizedKeysFile ${join(dir, "authorized_keys", "%u")}`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin no",
      `AllowUsers ${users.join(" ")}`,
      "Subsystem sftp internal-sftp",
      "LogLevel VERBOSE",
      "",
    ].join("\n"),
  );
  // `ip netns exec` execs sshd in place, so the pid is sshd's.
  const logPath = join(dir, "sshd.log"); // a file, not a pipe: a blocked reader would block sshd (see sshd.ts)
  const proc = Bun.spawn(["ip", "netns", "exec", ns, SSHD_BINARY, "-D", "-E", logPath, "-f", config], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  const logText = () => readLog(logPath);
  const deadline = Date.now() + 15_000;
  while (!logText().includes(`Server listening on ${addr} port ${port}`)) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stopTree(proc);
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`sshd in namespace ${ns} did not start:\n${logText()}`);
    }
    await Bun.sleep(20);
  }
  const [type, key] = readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/);
  return {
    proc,
    dir,
    handle: {
      host: addr,
      port,
      pid: proc.pid,
      hostKeyLine: `[${addr}]:${port} ${type} ${key}`,
      clientKeyPath,
      log: logText,
    },
  };
}

// TERM the process and its descendants by PID; KILL what is left after a deadline.
async function stopTree(proc: Subprocess): Promise<void> {
  const pids = [proc.pid, ...descendantPids(proc.pid)];
  for (const p of pids) signal(p, "SIGTERM");
  const deadline = Date.now() + 5_000;
  while (
    pids.some((p) => p !== proc.pid && isAlive(p)) ||
    (proc.exitCode === null && proc.signalCode === null)
  ) {
    if (Date.now() > deadline) {
      for (const p of pids) signal(p, "SIGKILL");
      break;
    }
    await Bun.sleep(20);
  }
  await proc.exited;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
