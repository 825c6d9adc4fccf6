// remote_job_dir is awaitless's own, through the compiled binary against a private sshd, for a dash and a busybox
// login shell: "~", "~/.ssh" and "/tmp" are refused before anything is made (the home keeps its mode, no /tmp/jobs
// or /tmp/bin); an existing directory open to others is refused with the fix and keeps its mode. A refusal naming
// a directory another (throwaway) user planted with escapes in its name, and a remote_job_dir with escapes that
// cannot be prepared, reach a terminal escaped. gc over SSH never follows a link in place of the root's jobs/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { createLocalUser, type LocalUser } from "../helpers/local-users.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { onTty, rawAt, scriptAvailable } from "../helpers/tty.ts";
import { type SshWorld, sshWorld } from "./ssh-fixture.ts";

const runE2e = gateOnAvailability("SSH own-root e2e tests (private OpenSSH server, root)", sshdAvailable());
const ttyOk = runE2e && gateOnAvailability("SSH refusals on a terminal (script(1))", scriptAvailable());

function idOf(user: string, flag: "-u" | "-g"): number {
  return Number(Bun.spawnSync(["id", flag, user]).stdout.toString().trim());
}
const homeOf = (user: string) =>
  Bun.spawnSync(["sh", "-c", `getent passwd ${user} | cut -d: -f6`])
    .stdout.toString()
    .trim();
const mode = (p: string) => statSync(p).mode & 0o7777;

let w: SshWorld;
let base: string;
let attacker: LocalUser | undefined;
if (runE2e) {
  beforeAll(async () => {
    w = await sshWorld();
    base = mkdtempSync("/tmp/awl-own-roots-");
    chmodSync(base, 0o755); // root's, readable by the test users
    attacker = createLocalUser();
  });
  afterAll(async () => {
    await w?.close();
    if (base) rmSync(base, { recursive: true, force: true });
    attacker?.remove();
  });
}

describe.each(runE2e ? (["dash", "busybox"] as const) : [])("remote_job_dir as the %s user", (kind) => {
  const host = () => ["--backend", "ssh", "--host", w.alias[kind]];
  const user = () => w.sshd.users[kind];
  const useRoot = (dir: string) =>
    w.sb.writeConfig(`[hosts.${w.alias[kind]}]\nremote_job_dir = ${JSON.stringify(dir)}\n`);

  test('"~", "~/.ssh" and "/tmp": refused before anything is made; the home keeps its mode', () => {
    const home = homeOf(user());
    const homeMode = mode(home);
    const ssh = join(home, ".ssh");
    const madeSsh = !existsSync(ssh);
    if (madeSsh) {
      mkdirSync(ssh, { mode: 0o700 });
      chownSync(ssh, idOf(user(), "-u"), idOf(user(), "-g"));
    }
    const tmpBefore = ["/tmp/jobs", "/tmp/bin"].filter((p) => existsSync(p));
    try {
      for (const [dir, why] of [
        ["~", "is your home directory"],
        ["~/", "is your home directory"],
        ["~/.ssh", "is your ~/.ssh or inside it"],
        ["/tmp", "is shared with other users and the system"],
      ] as const) {
        useRoot(dir);
        const r = w.sb.run(["run", ...host(), "--", "true"]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain(`refusing remote_job_dir ${dir} on ${w.alias[kind]}:`);
        expect(r.stderr).toContain(why);
        expect(r.stderr).toContain("choose a directory of its own");
      }
      expect(mode(home)).toBe(homeMode);
      expect(existsSync(join(home, "jobs"))).toBe(false);
      expect(existsSync(join(ssh, "jobs"))).toBe(false);
      expect(mode(ssh)).toBe(0o700);
      expect(["/tmp/jobs", "/tmp/bin"].filter((p) => existsSync(p))).toEqual(tmpBefore);
    } finally {
      chmodSync(home, homeMode);
      for (const p of ["/tmp/jobs", "/tmp/bin"]) {
        if (!tmpBefore.includes(p) && existsSync(p) && lstatSync(p).uid === idOf(user(), "-u"))
          rmSync(p, { recursive: true, force: true });
      }
      if (madeSsh) rmSync(ssh, { recursive: true, force: true });
    }
  }, 60_000);

  test("an existing directory open to others: refused with the fix, its mode kept; accepted once private", () => {
    const mine = join(base, `open-${kind}`);
    mkdirSync(mine);
    chmodSync(mine, 0o755);
    chownSync(mine, idOf(user(), "-u"), idOf(user(), "-g"));
    useRoot(mine);
    const r = w.sb.run(["run", ...host(), "--", "true"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${mine} exists and is open to other users (drwxr-xr-x)`);
    expect(r.stderr).toContain(`run chmod 700 ${mine} on the host if only you use it`);
    expect(mode(mine)).toBe(0o755);
    chmodSync(mine, 0o700);
    const ok = w.sb.run(["run", "--json", ...host(), "--", "sh", "-c", "echo ok"]);
    expect(ok.json?.stdout_tail).toBe("ok\n");
  }, 60_000);

  test("gc never follows a link put in place of the root's jobs/", () => {
    const root = join(base, `gc-${kind}`);
    mkdirSync(root, { mode: 0o700 });
    chownSync(root, idOf(user(), "-u"), idOf(user(), "-g"));
    useRoot(root);
    const r = w.sb.run(["run", "--json", ...host(), "--", "true"]);
    expect(r.code).toBe(0);
    const id = r.json.job_id as string;
    const victim = join(base, `victim-${kind}`);
    mkdirSync(join(victim, id), { recursive: true });
    writeFileSync(join(victim, id, "keep"), "not the job's\n");
    Bun.spawnSync(["chown", "-R", `${idOf(user(), "-u")}:${idOf(user(), "-g")}`, victim]);
    renameSync(join(root, "jobs"), join(root, "jobs-real"));
    symlinkSync(victim, join(root, "jobs"));
    const gc = w.sb.run(["gc", "--older-than", "0s"]);
    expect(gc.code).toBe(0);
    expect(gc.stdout).toContain(`forgot ${id} without touching its files`);
    expect(gc.stdout).toContain("a symbolic link on the way");
    expect(readFileSync(join(victim, id, "keep"), "utf8")).toBe("not the job's\n");
  }, 60_000);

  test("refusals naming what another user planted, and an unpreparable remote_job_dir, reach a terminal escaped", () => {
    if (!ttyOk || !attacker) return;
    const sticky = join(base, `sticky-${kind}`);
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const planted = join(sticky, "\x1b]0;owned\x07\x1b]52;c;cHduZWQ=\x07\u202e");
    mkdirSync(planted);
    chownSync(planted, attacker.uid, attacker.gid);
    symlinkSync(planted, join(sticky, "data"));
    Bun.spawnSync(["chown", "-h", `${attacker.uid}:${attacker.gid}`, join(sticky, "data")]);
    useRoot(join(sticky, "data", "awaitless"));
    const refused = onTty(w.sb, ["run", ...host(), "--", "true"]);
    expect(refused.code).not.toBe(0);
    expect(refused.screen).toContain("refusing remote_job_dir");
    expect(refused.screen).toContain("owned by another user");
    expect(rawAt(refused.screen)).toBe("clean");

    useRoot("/proc/\x1b]0;owned\x07\u009b2J/awaitless");
    const unprepared = onTty(w.sb, ["run", ...host(), "--", "true"]);
    expect(unprepared.code).not.toBe(0);
    expect(unprepared.screen).toContain("could not prepare");
    expect(unprepared.screen).toContain("\\u001b]0;owned\\u0007");
    expect(rawAt(unprepared.screen)).toBe("clean");
  }, 60_000);
});
