// A directory awaitless keeps its files in (the data directory) is its own: never a shared one (`/`, `/tmp`, the
// home, ~/.ssh, …), and never one whose mode it would have to change. Checked before anything is created in it.
import { readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { AwaitlessError, type ErrorCode } from "../model/errors.ts";
import { nodeOs } from "../util/node-os.ts";
import { lstatOrNull } from "../util/trusted-dir.ts";
import { LEGACY_FILE, STORE_FILE } from "./store-file.ts";

/** Directories shared with other users or with the whole system: never a root of awaitless's files. */
export const SHARED_DIRS = [
  "/",
  "/tmp",
  "/var/tmp",
  "/dev/shm",
  "/home",
  "/root",
  "/usr",
  "/etc",
  "/var",
  "/opt",
  "/srv",
  "/run",
  "/mnt",
  "/media",
] as const;

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/** $HOME (else the account's home) and the account's home: what os.homedir() and os.userInfo() would say. */
function homes(): string[] {
  const account = accountHome();
  const out = new Set<string>();
  for (const h of [process.env.HOME || account, account]) if (h) out.add(real(h));
  return [...out];
}

/**
 * The account's home as the system's user database gives it, read from /etc/passwd; an account that file does not
 * hold (a directory service's) is asked of node:os, loaded only then: importing it costs every start.
 */
function accountHome(): string {
  const uid = process.getuid?.();
  try {
    if (uid !== undefined)
      for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
        const f = line.split(":");
        if (f.length >= 7 && f[2] === String(uid)) return f[5]!;
      }
  } catch {
    // unreadable: ask the system below
  }
  try {
    return nodeOs().userInfo().homedir;
  } catch {
    return "";
  }
}

/** Why `dir` (as it resolves now) is a shared directory, or null. */
export function sharedRootReason(dir: string): string | null {
  const r = real(dir);
  if ((SHARED_DIRS as readonly string[]).includes(r)) return `${r} is shared with other users and the system`;
  for (const h of homes()) {
    if (r === h) return `${r} is your home directory`;
    const ssh = join(h, ".ssh");
    if (r === ssh) return `${r} is your ~/.ssh, which ssh itself guards`;
    if (r.startsWith(`${ssh}/`)) return `${r} is inside your ~/.ssh, which ssh itself guards`;
  }
  return null;
}

/** True when `dir` holds an Awaitless store file of ours (this version's or 0.8's), owned by us: awaitless made it. */
function holdsOurStore(dir: string): boolean {
  const uid = process.getuid?.();
  return [STORE_FILE, LEGACY_FILE].some((f) => {
    const st = lstatOrNull(join(dir, f));
    return st?.isFile() === true && (uid === undefined || st.uid === uid);
  });
}

/**
 * Checks the root `dir` (the data directory) before anything is created in it, and says whether awaitless may make
 * it private: refused when it is a shared directory (`/`, `/tmp`, the home, ~/.ssh, …) or an existing directory open
 * to other users that awaitless did not make (it never changes the mode of such a directory). An existing directory
 * holding an Awaitless store of ours (this version's or 0.8's, which made it) may be made private (true); a missing
 * one is created private by the caller (false: nothing to change).
 */
export function checkOwnRoot(dir: string, what: string, fix: string, code: ErrorCode): boolean {
  const refuse = (why: string, hint: string): never => {
    throw new AwaitlessError(code, `refusing ${what} ${dir}: ${why}`, hint, { directory: dir });
  };
  const shared = sharedRootReason(dir);
  if (shared !== null) {
    refuse(
      `${shared}; awaitless keeps its files in a directory of its own and would have to make this one private`,
      `${fix}, for example ${join(dir, "awaitless")} (awaitless creates it, private)`,
    );
  }
  const st = lstatOrNull(real(dir));
  if (st === null || !st.isDirectory() || (st.mode & 0o077) === 0) return false;
  if (holdsOurStore(dir)) return true;
  return refuse(
    `it exists and is open to other users (mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")}), and awaitless does not change the mode of a directory it did not create`,
    `run chmod 700 ${dir} if only you use it, or ${fix} (a new path: awaitless creates it, private)`,
  );
}
