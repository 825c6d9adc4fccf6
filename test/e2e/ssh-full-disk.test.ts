// A full disk on an SSH host loses nothing, through the compiled binary and a private sshd: the remote job dir is a
// real 3 MiB tmpfs owned by the test user (dash and busybox login shells). A job whose output fills it keeps its
// exit code; a launch on the full host fails with no_space naming the host, the directory and its free space, and
// leaves no remote directory and no local row; gc makes room again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { fillUp, freeBytes, mountTmpfs, tmpfsAvailable, unmountTmpfs } from "../helpers/tmpfs.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const avail = sshdAvailable().ok ? tmpfsAvailable() : sshdAvailable();
const runE2e = gateOnAvailability("SSH full-disk e2e tests (private sshd, a real tmpfs)", avail);

const FILL = ["sh", "-c", 'head -c 8000000 /dev/zero | tr "\\0" x; echo done; exit 7'];

function idOf(user: string, flag: "-u" | "-g"): string {
  return Bun.spawnSync(["id", flag, user]).stdout.toString().trim();
}

let w: SshWorld;
const mounts: string[] = [];
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    const tables: string[] = [];
    for (const kind of ["dash", "busybox"] as const) {
      const user = w.sshd.users[kind];
      const dir = join("/tmp", `awl-full-${process.pid}-${kind}`);
      mounts.push(dir);
      mountTmpfs(dir, "3m", [`uid=${idOf(user, "-u")}`, `gid=${idOf(user, "-g")}`, "mode=0700"]);
      tables.push(`[hosts.${w.alias[kind]}]\nremote_job_dir = "${dir}"\n`);
    }
    w.sb.writeConfig(tables.join("\n"));
  });
  afterAll(async () => {
    for (const dir of mounts) {
      unmountTmpfs(dir);
      rmSync(dir, { recursive: true, force: true });
    }
    await w?.close();
  });

  for (const [index, kind] of (["dash", "busybox"] as const).entries()) {
    describe(`SSH host with a full remote job dir [${kind}]`, () => {
      test("the job that filled it keeps its exit code; a launch fails cleanly; gc makes room", () => {
        const remote = mounts[index]!;
        const host = ["--backend", "ssh", "--host", w.alias[kind]];
        const run = w.sb.run(["run", "--json", ...host, "--", ...FILL]);
        expect(run.stderr).not.toContain("report this");
        expect(run.code).toBe(3);
        expect(run.json.result.exit_code).toBe(7);
        expect(run.json.result.digest[0]).toContain("was full while it ran");
        const id = run.json.job_id as string;
        const remoteJob = join(remote, "jobs", id);
        expect(existsSync(join(remoteJob, "exit"))).toBe(true);
        fillUp(remote); // whatever room the job's records left
        expect(freeBytes(remote)).toBeLessThan(4096);
        expect(w.sb.run(["status", "--json", id]).json).toMatchObject({ state: "failed", exit_code: 7 });
        const logs = w.sb.run(["logs", id, "--tail", "1"]);
        expect(logs.code).toBe(0);
        expect(logs.stdout).toMatch(/^x+…?$/m);

        const before = w.sb.run(["list", "--json", "--limit", "1000"]).json.jobs.length;
        const refused = w.sb.run(["run", ...host, "--", "echo", "hi"]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`no space left in ${w.alias[kind]}:${remote}/jobs`);
        expect(refused.stderr).toMatch(/free of 3\.0 MiB/);
        expect(refused.stderr).toContain("awaitless gc");
        expect(refused.stderr).toContain("remote_job_dir");
        expect(refused.stderr).not.toContain("report this");
        expect(readdirSync(join(remote, "jobs"))).toEqual([id]);
        expect(w.sb.run(["list", "--json", "--limit", "1000"]).json.jobs.length).toBe(before);

        rmSync(join(remote, "filler"));
        expect(w.sb.run(["gc", "--keep", "0"]).code).toBe(0);
        expect(readdirSync(join(remote, "jobs"))).toEqual([]);
        const again = w.sb.run(["run", "--json", ...host, "--", "echo", "room again"]);
        expect(again.code).toBe(0);
        expect(again.json.result.stdout_tail).toBe("room again\n");
      });
    });
  }
}
