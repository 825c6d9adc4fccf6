// A directory holding one symlink to busybox per applet: as PATH, a host where busybox provides every utility.
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * Fills `dir` (created; an existing one is taken as already filled) with a link per busybox applet, leaving out
 * the names in `except`. Returns `dir`, or null when busybox is not installed.
 */
export function busyboxAppletDir(dir: string, except: ReadonlySet<string> = new Set()): string | null {
  const busybox = Bun.which("busybox");
  if (busybox === null) return null;
  if (existsSync(dir)) return dir;
  mkdirSync(dir, { recursive: true });
  const applets = Bun.spawnSync([busybox, "--list"]).stdout.toString().split("\n");
  for (const a of applets)
    if (/^[a-z0-9_.[-]+$/.test(a) && !except.has(a)) symlinkSync(busybox, join(dir, a));
  return dir;
}
