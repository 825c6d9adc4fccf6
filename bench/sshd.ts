// The benches' private sshd (test/helpers/sshd.ts; needs root) as user awl-dash, and the client side under a HOME:
// ~/.ssh/config with one Host block per alias and a known_hosts naming that sshd.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hostBlock } from "../test/e2e/ssh-fixture.ts";
import { type SshdHandle, startSshd } from "../test/helpers/sshd.ts";

export interface BenchSshd {
  sshd: SshdHandle;
  sshDir: string;
  /** HOME/.ssh/config, for `ssh -F`. */
  configPath: string;
}

/** `aliases` maps each Host alias to the extra lines of its block (default: one plain `bench`). */
export async function startBenchSshd(
  home: string,
  aliases: Record<string, string[]> = { bench: [] },
): Promise<BenchSshd> {
  const sshd = await startSshd({ users: ["awl-dash"] });
  const sshDir = join(home, ".ssh");
  mkdirSync(sshDir, { mode: 0o700, recursive: true });
  const knownHosts = join(sshDir, "known_hosts");
  const configPath = join(sshDir, "config");
  const blocks = Object.entries(aliases).map(([alias, extra]) =>
    hostBlock(alias, sshd, "awl-dash", [`UserKnownHostsFile ${knownHosts}`, ...extra]),
  );
  writeFileSync(configPath, blocks.join(""));
  writeFileSync(knownHosts, `${sshd.hostKeyLine}\n`, { mode: 0o600 });
  return { sshd, sshDir, configPath };
}
