// A real, small tmpfs for full-disk tests: mounted by the test (root only) and always unmounted by it.
import { mkdirSync, statfsSync } from "node:fs";
import type { Availability } from "./sshd.ts";

export function tmpfsAvailable(): Availability {
  if (process.platform !== "linux") return { ok: false, why: "tmpfs mounts need Linux" };
  if (process.getuid?.() !== 0)
    return { ok: false, why: "mounting a tmpfs needs root; run the tests as root" };
  if (Bun.which("mount") === null || Bun.which("umount") === null)
    return { ok: false, why: "mount/umount are missing (util-linux)" };
  return { ok: true, why: "" };
}

/** Mounts a tmpfs of `size` (e.g. "3m") at `dir` (created); `options` adds mount options such as uid=, gid=, mode=. */
export function mountTmpfs(dir: string, size: string, options: string[] = []): void {
  mkdirSync(dir, { recursive: true });
  const r = Bun.spawnSync([
    "mount",
    "-t",
    "tmpfs",
    "-o",
    ["size=" + size, ...options].join(","),
    "tmpfs",
    dir,
  ]);
  if (r.exitCode !== 0) throw new Error(`mount tmpfs at ${dir} failed: ${r.stderr.toString().trim()}`);
}

/** Changes a mounted tmpfs's options in place (e.g. nr_inodes=N), keeping its files. */
export function remountTmpfs(dir: string, options: string[]): void {
  const r = Bun.spawnSync(["mount", "-o", ["remount", ...options].join(","), dir]);
  if (r.exitCode !== 0) throw new Error(`remount ${dir} failed: ${r.stderr.toString().trim()}`);
}

/** Unmounts `dir` if it is a mount point; lazily when busy, so a failing test never leaves a mount behind. */
export function unmountTmpfs(dir: string): void {
  if (Bun.spawnSync(["mountpoint", "-q", dir]).exitCode !== 0) return;
  if (Bun.spawnSync(["umount", dir]).exitCode === 0) return;
  Bun.spawnSync(["umount", "-l", dir]);
}

/** Free bytes on the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Fills the file system holding `dir` with `dir/filler` until it is full (ENOSPC ends the write). */
export function fillUp(dir: string): void {
  Bun.spawnSync(["dd", "if=/dev/zero", `of=${dir}/filler`, "bs=64k"], { stderr: "ignore" });
}
