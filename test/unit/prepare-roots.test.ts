// prepare.sh (the job root of an SSH host or a Slurm login node) under sh, dash and busybox: shared roots (the
// home, ~/.ssh and inside it) and an existing root open to others are refused before anything is made, and no
// mode is changed; a new root is made 0700 without chmod; an existing private one is used.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keyValues, PREPARE, script } from "../../src/wrapper/host-scripts.ts";

const tmp = realpathSync(mkdtempSync(join(tmpdir(), "awl-prepare-roots-")));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const shells = [
  ["sh", Bun.which("sh")],
  ["dash", Bun.which("dash")],
  ["busybox", Bun.which("busybox")],
].filter((s): s is [string, string] => s[1] !== null);

const mode = (p: string) => statSync(p).mode & 0o7777;

describe.each(shells)("prepare under %s", (name, shell) => {
  const home = join(tmp, name);
  mkdirSync(join(home, ".ssh"), { recursive: true, mode: 0o700 });
  chmodSync(home, 0o755);
  const run = (root: string) => {
    const argv = shell.endsWith("busybox") ? [shell, "sh", "-s"] : [shell, "-s"];
    const p = Bun.spawnSync(argv, {
      stdin: Buffer.from(script(PREPARE, [root, "wrapper-x.sh"])),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      stdout: "pipe",
      stderr: "pipe",
    });
    return { code: p.exitCode, kv: keyValues(p.stdout.toString()) };
  };

  test("shared roots are refused before anything is made", () => {
    // (/ and /tmp are not tried here, as root on this machine: a regression would change their mode. The SSH
    // e2e test tries /tmp as a test user, who cannot.)
    for (const [root, why] of [
      ["~", "is your home directory"],
      ["", "is your home directory"],
      [`~/../${name}`, "is your home directory"],
      ["~/.ssh", "is your ~/.ssh or inside it"],
      ["~/.ssh/awaitless", "is your ~/.ssh or inside it"],
    ] as const) {
      const r = run(root);
      expect(r.code).toBe(5);
      expect(r.kv.untrusted).toBe("1");
      expect(r.kv.error).toContain(why);
      expect(r.kv.fix).toContain("choose a directory of its own");
    }
    expect(readdirSync(home)).toEqual([".ssh"]);
    expect(readdirSync(join(home, ".ssh"))).toEqual([]);
    expect(mode(home)).toBe(0o755);
  });

  test("an existing root open to others is refused and keeps its mode; a new one is made 0700", () => {
    const open = join(tmp, `${name}-open`);
    mkdirSync(open);
    chmodSync(open, 0o755);
    const r = run(open);
    expect(r.code).toBe(5);
    expect(r.kv.error).toBe(
      `${open} exists and is open to other users (drwxr-xr-x), and awaitless does not change the mode of a directory it did not create`,
    );
    expect(r.kv.fix).toContain(`run chmod 700 ${open} on the host`);
    expect(mode(open)).toBe(0o755);
    expect(readdirSync(open)).toEqual([]);
    chmodSync(open, 0o700);
    expect(run(open).kv.root).toBe(open);
    const fresh = join(tmp, `${name}-new`, "deep", "root");
    expect(run(fresh).kv.root).toBe(fresh);
    for (const p of [join(tmp, `${name}-new`), fresh, join(fresh, "jobs"), join(fresh, "bin")])
      expect(mode(p)).toBe(0o700);
  });
});
