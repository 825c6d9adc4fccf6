// `--host NAME` without --backend runs over SSH (or the host's configured backend) through the compiled binary and
// the MCP server, against a private OpenSSH sshd: an ~/.ssh/config alias alone is enough, as the README promises.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { structured } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability(
  "--host without --backend over SSH (private OpenSSH server)",
  sshdAvailable(),
);

let w: SshWorld;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
  });
  afterAll(async () => {
    await w?.close();
  });
}

describe.skipIf(!runE2e)("--host without --backend", () => {
  test("submit --host ALIAS (only an ~/.ssh/config alias) runs the job over SSH", () => {
    const host = w.alias.dash;
    const id = w.sb.submit(["sh", "-c", "echo on-$(id -un)"], ["--host", host]);
    const r = w.sb.run(["wait", "--json", id]);
    expect(r.code).toBe(0);
    expect(r.json.backend).toBe("ssh");
    expect(r.json.host).toBe(host);
    expect(r.json.stdout_tail).toBe(`on-${w.sshd.users.dash}\n`);
    expect(w.sb.status(id).backend_id.remote_dir).toContain(`/.awaitless/jobs/${id}`);
  }, 30_000);

  test("[defaults] backend = local and [hosts.NAME] backend = ssh: run --host uses SSH; list --host finds it", () => {
    const host = w.alias.busybox;
    w.sb.writeConfig(`[defaults]\nbackend = "local"\n[hosts.${host}]\nbackend = "ssh"\n`);
    try {
      const r = w.sb.run(["run", "--json", "--host", host, "--", "sh", "-c", "echo ran-remote"]);
      expect(r.code).toBe(0);
      expect(r.json.backend).toBe("ssh");
      expect(r.json.stdout_tail).toBe("ran-remote\n");
      const listed = w.sb.run(["list", "--json", "--host", host]).json.jobs;
      expect(listed.map((j: { job_id: string }) => j.job_id)).toContain(r.json.job_id);
      expect(
        listed.every((j: { backend: string; host: string }) => j.backend === "ssh" && j.host === host),
      ).toBe(true);
      // without --host, the default backend still runs jobs here
      const here = w.sb.run(["run", "--json", "--", "true"]);
      expect(here.json.backend).toBe("local");
    } finally {
      w.sb.writeConfig("");
    }
  }, 30_000);

  test("MCP run with host and no backend runs over SSH; backend local with host is refused", async () => {
    const host = w.alias.dash;
    const conn = await connectStdio("modern", w.sb.env, w.sb.work, "host-backend-e2e");
    try {
      const ran = await conn.client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", "echo via-mcp"], host, client_request_id: "mcp-host-1" },
      });
      expect(ran.isError).toBeFalsy();
      const body = structured<{ backend: string; host: string; stdout_tail: string; state: string }>(ran);
      expect(body.state).toBe("succeeded");
      expect(body.backend).toBe("ssh");
      expect(body.host).toBe(host);
      expect(body.stdout_tail).toBe("via-mcp\n");
      const before = w.sb.jobCount();
      const refused = await conn.client.callTool({
        name: "submit_job",
        arguments: { command: ["true"], host, backend: "local" },
      });
      expect(refused.isError).toBe(true);
      expect(structured<{ error: { code: string } }>(refused).error.code).toBe("invalid_argument");
      expect(w.sb.jobCount()).toBe(before);
    } finally {
      await conn.close();
    }
  }, 30_000);
});
