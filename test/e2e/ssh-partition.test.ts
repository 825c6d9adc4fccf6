// A network partition under a running SSH job: sshd in a private network namespace behind a veth pair; the link
// goes down mid-job, the job is not lost and status says the host is unreachable (CLI exit 7); after the link comes
// back the waiter that was running all along collects the result.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { createNetns, type Netns, type NetnsSshd, netnsAvailable } from "../helpers/netns.ts";
import { descendantPids, gateOnAvailability } from "../helpers/sshd.ts";
import { remoteFile } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH partition e2e test (network namespace + veth)", netnsAvailable());

let ns: Netns;
let sshd: NetnsSshd;
let sb: Sandbox;

if (runE2e) {
  beforeAll(async () => {
    ns = createNetns();
    sshd = await ns.startSshd(["awl-dash"]);
    sb = new Sandbox();
    const sshDir = join(sb.root, ".ssh");
    mkdirSync(sshDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(sshDir, "config"),
      [
        "Host parted",
        `  HostName ${sshd.host}`,
        `  Port ${sshd.port}`,
        "  User awl-dash",
        `  IdentityFile ${sshd.clientKeyPath}`,
        "  IdentitiesOnly yes",
        // A dead connection is noticed within about 3 s; a new one gives up after 3 s.
        "  ServerAliveInterval 1",
        "  ServerAliveCountMax 2",
        "  ConnectTimeout 3",
        "",
      ].join("\n"),
    );
    writeFileSync(join(sshDir, "known_hosts"), `${sshd.hostKeyLine}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await ns?.cleanup();
    sb?.cleanup();
  });
}

/** The per-connection sshd processes serving awl-dash inside the namespace. */
function sessions(): number[] {
  return descendantPids(sshd.pid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sshd: awl-dash");
    } catch {
      return false;
    }
  });
}

describe.if(runE2e)("ssh partition", () => {
  test("link down mid-job: not lost, status says unreachable; link up: the running wait collects the result", async () => {
    const id = sb.submit(
      ["sh", "-c", "sleep 10; echo partition-survived"],
      ["--backend", "ssh", "--host", "parted"],
    );
    const dir = sb.status(id).backend_id.remote_dir as string;
    await until("the started record", () => remoteFile(dir, "started"));
    await until("the submit's session to end", () => sessions().length === 0);
    const waiter = sb.spawn(["wait", "--json", "--timeout", "120s", id]);
    const out = Promise.all([
      new Response(waiter.stdout).text(),
      new Response(waiter.stderr).text(),
      waiter.exited,
    ]);
    try {
      await until("the waiter's connection", () => sessions().length > 0);
      ns.down();
      const during = sb.run(["status", "--json", id]);
      expect(during.code).toBe(7);
      expect(during.json.state).toBe("running");
      expect(during.json.status_message).toContain("parted is unreachable");
      expect(during.json.host_unreachable).toContain("parted is unreachable");
      // A bounded wait that runs out while the host is away says so too.
      const short = sb.run(["wait", "--json", "--timeout", "1s", id]);
      expect(short.code).toBe(7);
      expect(short.json.job_state).toBe("running");
      // The job finishes on the host while the network is away (its files are visible here directly).
      await until("the exit record on the host", () => remoteFile(dir, "exit"), 30_000);
      const after = sb.run(["status", "--json", id]);
      expect(after.code).toBe(7);
      expect(after.json.state).toBe("running");
      expect(after.json.status_message).toContain("unreachable");
      expect(waiter.exitCode).toBeNull();
      ns.up();
      const [stdout, stderr, code] = await out;
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const res = JSON.parse(stdout);
      expect(res.state).toBe("succeeded");
      expect(res.stdout_tail).toBe("partition-survived\n");
      const final = sb.run(["status", "--json", id]);
      expect(final.code).toBe(0);
      expect(final.json.state).toBe("succeeded");
      expect(final.json.status_message ?? "").not.toContain("unreachable");
      expect(final.json.host_unreachable).toBeUndefined();
    } finally {
      ns.up();
      if (waiter.exitCode === null) waiter.kill("SIGKILL");
      await waiter.exited;
    }
  }, 90_000);
});
