// remote_job_dir another user could control is refused, through the compiled binary against a private sshd, for a
// dash and a busybox login shell: a 0777 directory pre-created by the other test user with a fake wrapper under
// the public name (it never runs); a sticky root-owned 1777 parent with our own 0700 directory is accepted; a
// tampered wrapper in our own bin/ is uploaded again before the launch and never runs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { WRAPPER_FILE } from "../../src/backends/ssh/ssh-host.ts";
import { WRAPPER_SHA256 } from "../../src/wrapper/scripts.ts";
import { sha256Hex } from "../../src/wrapper/sha256.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability(
  "SSH trusted-directory e2e tests (private OpenSSH server)",
  sshdAvailable(),
);

function idOf(user: string, flag: "-u" | "-g"): number {
  return Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());
}

/** A fake wrapper that leaves a marker: it must never run. */
function fakeWrapper(marker: string): string {
  return `#!/bin/sh\ntouch '${marker}'\nexit 0\n`;
}

let w: SshWorld;
let base: string;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    // root-owned and 0755: the test users can reach what is inside, but not write here
    base = mkdtempSync("/tmp/awl-trust-");
    chmodSync(base, 0o755);
  });
  afterAll(async () => {
    await w?.close();
    if (base) rmSync(base, { recursive: true, force: true });
  });
}

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("remote_job_dir as the %s user", (kind) => {
  const other = kind === "dash" ? "busybox" : "dash";
  const host = () => ["--backend", "ssh", "--host", w.alias[kind]];
  const useRoot = (dir: string) => w.sb.writeConfig(`[hosts.${w.alias[kind]}]\nremote_job_dir = "${dir}"\n`);
  const owner = () => ({
    uid: idOf(w.sshd.users[kind], "-u"),
    gid: idOf(w.sshd.users[kind], "-g"),
  });

  test("a 0777 directory pre-created by another user with a fake wrapper: refused, the fake never runs", () => {
    const shared = join(base, `shared-${kind}`);
    const marker = join(shared, "fake-wrapper-ran");
    mkdirSync(join(shared, "bin"), { recursive: true });
    mkdirSync(join(shared, "jobs"));
    writeFileSync(join(shared, "bin", WRAPPER_FILE), fakeWrapper(marker), { mode: 0o755 });
    const attacker = { uid: idOf(w.sshd.users[other], "-u"), gid: idOf(w.sshd.users[other], "-g") };
    for (const p of [shared, join(shared, "bin"), join(shared, "jobs"), join(shared, "bin", WRAPPER_FILE)]) {
      chownSync(p, attacker.uid, attacker.gid);
    }
    for (const p of [shared, join(shared, "bin"), join(shared, "jobs")]) chmodSync(p, 0o777);
    useRoot(shared);
    const r = w.sb.run(["run", ...host(), "--", "echo", "secret-using job"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`refusing remote_job_dir ${shared} on ${w.alias[kind]}`);
    expect(r.stderr).toContain(`${shared} is owned by another user (uid ${attacker.uid})`);
    expect(r.stderr).toContain("choose a directory you own");
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(join(shared, "jobs"))).toEqual([]);
  }, 30_000);

  test("our own directory in another user's 0777 one is refused too (the parent is checked)", () => {
    const open = join(base, `open-${kind}`);
    mkdirSync(open);
    chmodSync(open, 0o777);
    const mine = join(open, "mine");
    mkdirSync(mine, { mode: 0o700 });
    chownSync(mine, owner().uid, owner().gid);
    useRoot(mine);
    const r = w.sb.run(["run", ...host(), "--", "true"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${open} is writable by other users or its group and not sticky`);
    expect(r.stderr).toContain(`chmod go-w ${open}`);
    expect(readdirSync(mine)).toEqual([]);
  }, 30_000);

  test("our own 0700 directory in a sticky root-owned 1777 parent: accepted", () => {
    const sticky = join(base, `sticky-${kind}`);
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const mine = join(sticky, "mine");
    mkdirSync(mine, { mode: 0o700 });
    chownSync(mine, owner().uid, owner().gid);
    useRoot(mine);
    const r = w.sb.run(["run", "--json", ...host(), "--", "sh", "-c", "echo ok"]);
    expect(r.code).toBe(0);
    expect(r.json.stdout_tail).toBe("ok\n");
    expect(readdirSync(join(mine, "jobs"))).toEqual([r.json.job_id]);
  }, 30_000);

  test("a tampered wrapper in our own bin/ is uploaded again before the launch, never run", () => {
    const root = join(base, `own-${kind}`);
    mkdirSync(root, { mode: 0o700 });
    chownSync(root, owner().uid, owner().gid);
    useRoot(root);
    expect(w.sb.run(["run", ...host(), "--", "true"]).code).toBe(0);
    const wrapper = join(root, "bin", WRAPPER_FILE);
    expect(sha256Hex(readFileSync(wrapper))).toBe(WRAPPER_SHA256);
    const marker = join(root, "tampered-wrapper-ran");
    writeFileSync(wrapper, fakeWrapper(marker)); // same name, same owner and mode, other content
    const r = w.sb.run(["run", "--json", ...host(), "--", "sh", "-c", "echo real; exit 3"]);
    expect(r.json.exit_code).toBe(3);
    expect(r.json.stdout_tail).toBe("real\n");
    expect(existsSync(marker)).toBe(false);
    expect(sha256Hex(readFileSync(wrapper))).toBe(WRAPPER_SHA256);
  }, 30_000);
});
