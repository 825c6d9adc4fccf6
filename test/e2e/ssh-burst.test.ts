// Many submits against one sshd with OpenSSH's default limits, through the compiled binary: a scripted loop of
// sequential submits, bursts of concurrent ones past MaxStartups (dropped connections are retried), and the error
// that names the sshd setting when every attempt is dropped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { gateOnAvailability, type SshdHandle, sshdAvailable, startSshd } from "../helpers/sshd.ts";
import { hostBlock, type SshWorld, sessionPids, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH burst e2e tests (private OpenSSH server)", sshdAvailable());

describe.skipIf(!runE2e)("many submits to one host", () => {
  let w: SshWorld;
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
  const flags = () => ["--json", "--backend", "ssh", "--host", w.alias.dash];

  test("40 sequential submits all launch, each disconnects cleanly, and no connection outlives its process", async () => {
    const ids = new Set<string>();
    const failures: string[] = [];
    for (let i = 0; i < 40; i++) {
      // A synchronous spawn, as a shell loop would: the test's event loop is blocked meanwhile.
      const r = w.sb.run(["submit", ...flags(), "--", "true"]);
      if (r.code === 0) ids.add(r.json.job_id);
      else failures.push(`#${i}: exit ${r.code}: ${r.stderr.trim()}`);
    }
    expect(failures).toEqual([]);
    expect(ids.size).toBe(40);
    await until("the host to serve no session", () => sessionPids(w.sshd, w.sshd.users.dash).length === 0);
    const log = w.sshd.log();
    expect(log.match(/^Accepted publickey for awl-dash/gm)?.length).toBe(40);
    // each process said goodbye (SSH_MSG_DISCONNECT) before exiting, rather than dropping the connection
    expect(log.match(/^Received disconnect from 127\.0\.0\.1 port \d+:11:/gm)?.length).toBe(40);
    expect(log).not.toContain("Connection closed by");
  }, 180_000);

  test("bursts of 16 concurrent submits (past the default MaxStartups 10) all launch once", async () => {
    for (let round = 0; round < 2; round++) {
      const rs = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          w.sb.runAsync(["submit", ...flags(), "--", "sh", "-c", `echo burst-${round}-${i}`]),
        ),
      );
      expect(rs.filter((r) => r.code !== 0).map((r) => r.stderr.trim())).toEqual([]);
    }
    const jobs = w.sb.run(["list", "--json", "--limit", "1000"]).json.jobs as { job_id: string }[];
    expect(jobs.length).toBe(40 + 32);
  }, 180_000);
});

describe.skipIf(!runE2e)("an sshd that drops connections at startup", () => {
  test("MaxStartups 3: twelve concurrent submits are retried until each gets in", async () => {
    await using sshd = await startSshd({ users: ["awl-dash"], extraConfig: ["MaxStartups 3"] });
    const w = sshWorldOn(sshd);
    try {
      const rs = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          w.sb.runAsync(["submit", "--json", "--host", "box", "--", "sh", "-c", `echo s${i}`]),
        ),
      );
      expect(rs.filter((r) => r.code !== 0).map((r) => r.stderr.trim())).toEqual([]);
      const waited = await Promise.all(rs.map((r) => w.sb.runAsync(["wait", "--json", r.json.job_id])));
      expect(waited.map((r) => r.json?.stdout_tail).sort()).toEqual(
        Array.from({ length: 12 }, (_, i) => `s${i}\n`).sort(),
      );
      // sshd did drop some: the retries, not luck, let them in
      expect(sshd.log()).toMatch(/drop connection #\d+ .* past MaxStartups/i);
    } finally {
      w.sb.cleanup();
    }
  }, 180_000);

  test("every attempt dropped: exit 7 naming MaxStartups and PerSourcePenalties, after a bounded number of tries", async () => {
    let accepted = 0;
    // What sshd does past MaxStartups or for a penalized address: one line, then close.
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(s) {
          accepted++;
          s.write("Not allowed at this time\r\n");
          s.end();
        },
        data() {},
      },
    });
    const w = await sshWorld();
    try {
      writeFileSync(
        join(w.sshDir, "config"),
        hostBlock("limited", { ...w.sshd, port: server.port }, w.sshd.users.dash),
      );
      const r = await w.sb.runAsync(["submit", "--json", "--host", "limited", "--", "true"]);
      expect(r.code).toBe(7);
      expect(r.json.error.code).toBe("connection_failed");
      expect(r.json.error.message).toContain("before the SSH handshake 6 times");
      expect(r.json.error.message).toContain("MaxStartups");
      expect(r.json.error.message).toContain("PerSourcePenalties");
      expect(r.json.error.hint).toContain("sshd_config");
      expect(accepted).toBe(6);
    } finally {
      server.stop(true);
      await w.close();
    }
  }, 60_000);
});

/** A sandbox whose ~/.ssh names `sshd` as the alias `box`. */
function sshWorldOn(sshd: SshdHandle): { sb: Sandbox } {
  const sb = new Sandbox();
  const sshDir = join(sb.root, ".ssh");
  Bun.spawnSync(["mkdir", "-m", "700", "-p", sshDir]);
  writeFileSync(join(sshDir, "config"), hostBlock("box", sshd, sshd.users.dash));
  writeFileSync(join(sshDir, "known_hosts"), `${sshd.hostKeyLine}\n`, { mode: 0o600 });
  return { sb };
}
