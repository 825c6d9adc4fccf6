// Throwaway local users for tests that need another person on this machine: created with a fresh name, their
// processes started with runuser, removed (home included) by the test that made them. Needs Linux and root.
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { type Availability, runLocked } from "./sshd.ts";

export function localUsersAvailable(): Availability {
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    return { ok: false, why: "needs Linux and root (it creates throwaway local users)" };
  for (const tool of ["useradd", "userdel", "runuser"])
    if (Bun.which(tool) === null)
      return { ok: false, why: `${tool} is missing (to enable: apt-get install passwd util-linux)` };
  return { ok: true, why: "" };
}

export interface LocalUser {
  name: string;
  home: string;
  uid: number;
  gid: number;
  /** Environment for a process of this user: its own HOME and PATH, nothing of the test's. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** `argv` run as this user (runuser), with `env`. */
  spawn(argv: string[], extra?: Record<string, string>): Bun.Subprocess<"ignore", "pipe", "pipe">;
  run(argv: string[], extra?: Record<string, string>): { code: number; stdout: string; stderr: string };
  /** Deletes the user and its home; its processes must have been stopped by the test. */
  remove(): void;
}

/** A new user `<prefix><random>` with a home directory (names stay under 32 characters). */
export function createLocalUser(prefix = "awl-t"): LocalUser {
  const name = `${prefix}${Math.random().toString(36).slice(2, 8)}`;
  runLocked(["useradd", "--create-home", "--shell", "/bin/sh", name]);
  const home = `/home/${name}`;
  const id = (flag: string) => Number(Bun.spawnSync(["id", flag, name]).stdout.toString().trim());
  const uid = id("-u");
  const gid = id("-g");
  const env = (extra: Record<string, string> = {}) => ({
    HOME: home,
    USER: name,
    LOGNAME: name,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    NO_COLOR: "1",
    ...extra,
  });
  const wrap = (argv: string[], extra: Record<string, string> = {}) => [
    "runuser",
    "-u",
    name,
    "--",
    "env",
    "-i",
    ...Object.entries(env(extra)).map(([k, v]) => `${k}=${v}`),
    ...argv,
  ];
  return {
    name,
    home,
    uid,
    gid,
    env,
    spawn: (argv, extra) =>
      Bun.spawn(wrap(argv, extra), { cwd: "/", stdin: "ignore", stdout: "pipe", stderr: "pipe" }),
    run(argv, extra) {
      const r = Bun.spawnSync(wrap(argv, extra), { cwd: "/", stdin: "ignore" });
      return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    },
    remove() {
      runLocked(["userdel", "--remove", "--force", name]);
    },
  };
}

/**
 * `program` as every user can run it: itself when `user` can, else a copy in a fresh world-readable directory
 * (`dispose` removes the copy).
 */
export function reachableBy(user: LocalUser, program: string): { path: string; dispose(): void } {
  if (user.run(["test", "-x", program]).code === 0) return { path: program, dispose() {} };
  const dir = mkdtempSync(join(tmpdir(), "awl-shared-bin-"));
  chmodSync(dir, 0o755);
  const copy = join(dir, basename(program));
  copyFileSync(program, copy);
  chmodSync(copy, 0o755);
  return { path: copy, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
