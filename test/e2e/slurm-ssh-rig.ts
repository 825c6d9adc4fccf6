// Rigs for the Slurm backend over the private sshd: an SshRunner logged in as a non-root test user (default awl-dash,
// login shell dash), inside the harness's counting runner, so SSH tests reuse makeRig and its cut/count tools.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SshRunner } from "../../src/backends/slurm/ssh-runner.ts";
import { SshHost } from "../../src/backends/ssh/ssh-host.ts";
import type { SshdHandle } from "../helpers/sshd.ts";
import { makeRig, type Rig, type RigOptions } from "./slurm-harness.ts";

export const SSH_CLUSTER = "cluster";

/** A runner on the private sshd as `user`, trusting only that sshd's host key. */
export function sshRunner(sshd: SshdHandle, user: string = sshd.users.dash): SshRunner {
  const knownHosts = join(sshd.dir, "known_hosts");
  writeFileSync(knownHosts, `${sshd.hostKeyLine}\n`);
  const host = new SshHost({
    name: SSH_CLUSTER,
    target: {
      label: SSH_CLUSTER,
      host: sshd.host,
      port: sshd.port,
      user,
      identityFiles: [sshd.clientKeyPath],
      agentSocket: null,
      hostKey: {
        host: sshd.host,
        port: sshd.port,
        userKnownHostsFiles: [knownHosts],
        globalKnownHostsFiles: [],
        strict: "yes",
      },
      connectTimeoutMs: 10_000,
      keepaliveIntervalMs: 5_000,
      keepaliveCountMax: 3,
    },
    remoteJobDir: "~/.awaitless",
    operationTimeoutMs: 30_000,
    transport: "ssh2",
    configFiles: [],
  });
  return new SshRunner(host);
}

/** makeRig with the login node reached over the private sshd; jobs go to host "cluster". */
export function makeSshRig(sshd: SshdHandle, opts: RigOptions & { user?: string } = {}): Rig {
  return makeRig({ hostName: SSH_CLUSTER, inner: sshRunner(sshd, opts.user), ...opts });
}
