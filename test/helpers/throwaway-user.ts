// A second local user that one test creates and deletes (root only): the other user of a shared machine.
import { runLocked } from "./sshd.ts";

export interface ThrowawayUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  /** Deletes the user (and its home, when one was made). */
  remove(): void;
}

export function throwawayUsersAvailable(): { ok: boolean; why: string } {
  if (process.platform !== "linux") return { ok: false, why: "needs Linux" };
  if (process.getuid?.() !== 0) return { ok: false, why: "needs root (useradd, chown to another uid)" };
  for (const tool of ["useradd", "userdel"])
    if (Bun.which(tool) === null) return { ok: false, why: `${tool} is missing (apt-get install passwd)` };
  return { ok: true, why: "" };
}

/** Creates a fresh user `awl-t<random>` (with a home when `home`, and `shell` as its login shell). */
export function createThrowawayUser(opts: { home?: boolean; shell?: string } = {}): ThrowawayUser {
  const name = `awl-t${Math.random().toString(36).slice(2, 8)}`;
  runLocked([
    "useradd",
    opts.home ? "--create-home" : "--no-create-home",
    "--shell",
    opts.shell ?? "/usr/sbin/nologin",
    name,
  ]);
  if (opts.shell) runLocked(["usermod", "--password", "*", name]);
  const id = (flag: string) => Number(Bun.spawnSync(["id", flag, name]).stdout.toString().trim());
  const home = Bun.spawnSync(["sh", "-c", `getent passwd ${name} | cut -d: -f6`])
    .stdout.toString()
    .trim();
  return {
    name,
    uid: id("-u"),
    gid: id("-g"),
    home,
    remove() {
      runLocked(["userdel", ...(opts.home ? ["--remove"] : []), name]);
    },
  };
}
