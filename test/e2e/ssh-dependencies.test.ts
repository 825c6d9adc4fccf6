// Job dependencies on an SSH host through the compiled binary against the private sshd (the shared cases, dash
// and busybox login shells: the held wrapper waits on the host, woken by its parent's wrapper), and dependencies
// across targets (this machine and a host, two hosts) refused before anything is created.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { dependencyCases } from "../helpers/dependency-cases.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH dependency e2e tests (private OpenSSH server)", sshdAvailable());
const run = `${process.pid}-${Date.now()}`;
let w: SshWorld;

function homeOf(user: string): string {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const home = line?.split(":")[5];
  if (!home) throw new Error(`no home directory for ${user} in /etc/passwd`);
  return home;
}

const USERS = ["dash", "busybox"] as const;
const jobDirOf = (u: (typeof USERS)[number]) => `.awl-deps-${run}-${u}`;
const workOf = (u: (typeof USERS)[number]) => `awl-deps-work-${run}-${u}`;

if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    w.sb.writeConfig(
      USERS.map((u) => `[hosts.${w.alias[u]}]\nremote_job_dir = "~/${jobDirOf(u)}"\n`).join("\n"),
    );
    for (const u of USERS) {
      const home = homeOf(w.sshd.users[u]);
      const dir = join(home, workOf(u));
      Bun.spawnSync(["mkdir", "-p", dir]);
      Bun.spawnSync(["chown", `${w.sshd.users[u]}:`, dir]);
    }
  });
  afterAll(async () => {
    if (!w) return;
    const active =
      (await w.sb.runAsync(["list", "--json", "--state", "active", "--limit", "10000"])).json?.jobs ?? [];
    for (const j of active) await w.sb.runAsync(["cancel", "--grace-period", "0", j.job_id]);
    for (const u of USERS) {
      const home = homeOf(w.sshd.users[u]);
      rmSync(join(home, jobDirOf(u)), { recursive: true, force: true });
      rmSync(join(home, workOf(u)), { recursive: true, force: true });
    }
    await w.close();
  });
}

describe.each(runE2e ? USERS : [])("ssh dependencies: %s user", (u) => {
  dependencyCases(() => ({
    // Always async: a blocking run would stop this process from draining sshd's log pipe.
    cli: (args) => w.sb.runAsync(args),
    launchFlags: ["--backend", "ssh", "--host", w.alias[u], "--cwd", workOf(u)],
    dir: join(homeOf(w.sshd.users[u]), workOf(u)),
    spawn: (args) => {
      const p = w.sb.spawn(args);
      return { pid: p.pid, exited: p.exited };
    },
  }));
});

describe.if(runE2e)("ssh dependencies across targets", () => {
  test("an SSH parent and a local child, or a parent on another host: refused, nothing created", async () => {
    const r0 = await w.sb.runAsync(["submit", "--json", "--host", w.alias.dash, "--", "sleep", "30"]);
    const p = r0.json.job_id as string;
    const before = (await w.sb.runAsync(["list", "--json", "--limit", "10000"])).json.jobs.length;
    const local = await w.sb.runAsync(["submit", "--after", p, "--", "true"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(
      `job ${p} runs on ${w.alias.dash} (ssh), this job on this machine (local)`,
    );
    const other = await w.sb.runAsync(["submit", "--host", w.alias.busybox, "--after", p, "--", "true"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`this job on ${w.alias.busybox} (ssh)`);
    expect((await w.sb.runAsync(["list", "--json", "--limit", "10000"])).json.jobs.length).toBe(before);
    await w.sb.runAsync(["cancel", "--grace-period", "0", p]);
  });
});
