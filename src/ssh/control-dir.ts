// The private directory for the OpenSSH control sockets we create: under the user's runtime dir, else the
// data dir; created 0700 and verified (a directory, ours, no group/other access, not a symlink) before each use,
// with a short verified directory when the socket path would pass the Unix socket length limit.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { dataDir } from "../config/config.ts";
import { AwaitlessError } from "../core/model/errors.ts";

/**
 * The longest control directory: sun_path is 104 bytes on macOS (108 on Linux), and OpenSSH binds the
 * master at `<ControlPath>.<16 random chars>` before renaming it; `%C` is 40 hex characters.
 */
export const MAX_CONTROL_DIR_BYTES = 103 - 1 - 40 - 17;

type Env = Record<string, string | undefined>;

function uid(): number {
  return process.getuid?.() ?? 0;
}

function notPrivate(dir: string, why: string): AwaitlessError {
  return new AwaitlessError(
    "config_invalid",
    `${dir} cannot hold ssh control sockets: ${why}`,
    `remove ${dir} (it must be a directory of uid ${uid()} that only its owner can use), or set ControlPath for the host in ~/.ssh/config`,
  );
}

// lstat: never follows a symlink; the owner must be us and nobody else may enter, read or write.
function verifyPrivate(dir: string): void {
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) throw notPrivate(dir, "it is a symbolic link");
  if (!st.isDirectory()) throw notPrivate(dir, "it is not a directory");
  if (st.uid !== uid()) throw notPrivate(dir, `it is owned by uid ${st.uid}`);
  if ((st.mode & 0o077) !== 0) {
    chmodSync(dir, 0o700); // ours: tighten it
    if ((lstatSync(dir).mode & 0o077) !== 0) throw notPrivate(dir, "it is open to other users");
  }
}

function ensurePrivate(dir: string): string {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  verifyPrivate(dir);
  return dir;
}

// $XDG_RUNTIME_DIR when it is a private directory of ours (as the XDG spec promises), else undefined.
function runtimeDir(env: Env): string | undefined {
  const dir = env.XDG_RUNTIME_DIR;
  if (dir === undefined || dir === "" || !isAbsolute(dir)) return undefined;
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid() && (st.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

// A short directory for sockets when `home` is too deep: a fresh mkdtemp one, remembered in `home`.
function shortDir(home: string): string {
  const pointer = join(home, "short-dir");
  try {
    const dir = readFileSync(pointer, "utf8").trim();
    if (dir !== "" && Buffer.byteLength(dir) <= MAX_CONTROL_DIR_BYTES) {
      verifyPrivate(dir);
      return dir;
    }
  } catch {
    // missing, gone, or not ours any more: make a new one
  }
  const dir = mkdtempSync(join(tmpdir(), "awl-"));
  verifyPrivate(dir);
  if (Buffer.byteLength(dir) > MAX_CONTROL_DIR_BYTES) {
    throw new AwaitlessError(
      "config_invalid",
      `no directory short enough for ssh control sockets (${dir} is over ${MAX_CONTROL_DIR_BYTES} bytes)`,
      "set TMPDIR to a short private directory, or set ControlPath for the host in ~/.ssh/config",
    );
  }
  writeFileSync(pointer, `${dir}\n`, { mode: 0o600 });
  return dir;
}

/** The directory for the control sockets we create (verified each call); `%C` is appended by the caller. */
export function defaultControlDir(env: Env = process.env): string {
  const runtime = runtimeDir(env);
  let home: string;
  if (runtime !== undefined) {
    home = ensurePrivate(join(runtime, "awaitless-ssh"));
  } else {
    const data = dataDir(env);
    mkdirSync(data, { recursive: true, mode: 0o700 });
    home = ensurePrivate(join(data, "ssh"));
  }
  return Buffer.byteLength(home) <= MAX_CONTROL_DIR_BYTES ? home : shortDir(home);
}
