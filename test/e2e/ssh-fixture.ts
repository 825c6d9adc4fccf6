// Shared setup for the SSH backend e2e tests: a private sshd plus a CLI sandbox whose HOME holds an ~/.ssh/config
// (aliases per test user) and a known_hosts file naming that sshd, so `--backend ssh --host ALIAS` reaches it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { descendantPids, type SshdHandle, startSshd } from "../helpers/sshd.ts";

export interface SshWorld {
  sshd: SshdHandle;
  sb: Sandbox;
  /** Alias per test user ("dash" | "busybox"). */
  alias: { dash: string; busybox: string };
  sshDir: string;
  close(): Promise<void>;
}

export function hostBlock(alias: string, sshd: SshdHandle, user: string, extra: string[] = []): string {
  return [
    `Host ${alias}`,
    "  HostName 127.0.0.1",
    `  Port ${sshd.port}`,
    `  User ${user}`,
    `  IdentityFile ${sshd.clientKeyPath}`,
    "  IdentitiesOnly yes",
    ...extra.map((l) => `  ${l}`),
    "",
  ].join("\n");
}

export async function sshWorld(extraConfig = ""): Promise<SshWorld> {
  const sshd = await startSshd();
  const sb = new Sandbox();
  const sshDir = join(sb.root, ".ssh");
  mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  const alias = { dash: "box-dash", busybox: "box-busybox" };
  writeFileSync(
    join(sshDir, "config"),
    hostBlock(alias.dash, sshd, sshd.users.dash) +
      hostBlock(alias.busybox, sshd, sshd.users.busybox) +
      extraConfig,
  );
  writeFileSync(join(sshDir, "known_hosts"), `${sshd.hostKeyLine}\n`, { mode: 0o600 });
  return {
    sshd,
    sb,
    alias,
    sshDir,
    async close() {
      await sshd.stop();
      sb.cleanup();
    },
  };
}

/** The per-connection sshd processes (privileged monitor and its user child) serving a user, by PID. */
export function sessionPids(sshd: SshdHandle, user: string): number[] {
  return descendantPids(sshd.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").startsWith(`sshd: ${user}`);
    } catch {
      return false;
    }
  });
}

/** Our remote programs (`sh -s`, one per open command or watch channel) running under `sshd` now. */
export function remoteScripts(sshd: SshdHandle): number[] {
  return descendantPids(sshd.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8") === "sh\0-s\0";
    } catch {
      return false;
    }
  });
}

/** The wrapper's files on the host (the host is this machine, so tests can look directly). */
export function remoteFile(remoteDir: string, name: string): string | null {
  try {
    return readFileSync(join(remoteDir, name), "utf8");
  } catch {
    return null;
  }
}

/** Pids whose process group is `pgid` (live, non-zombie). */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const p of descendantPids(1)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid && f[0] !== "Z") out.push(p);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}
