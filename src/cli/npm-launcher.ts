// Whether a command on PATH is the npm package's launcher (npm/launcher.sh) that starts this very binary, so hints
// can name `awaitless` for an npm install too (PATH finds the launcher there, not the binary it execs).
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";

const PLATFORM_BINARY = /\/@awaitless\/([^/]+)\/bin\/awaitless$/;
const LAUNCHER = /\/bin\/awaitless$/;

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * True when `found` is (a link to) the launcher of an `awaitless` package whose platform package, resolved as the
 * launcher resolves it (node_modules of the package, then of each directory above it), is `exec`.
 */
export function launchesThis(found: string, exec: string): boolean {
  const binary = real(exec);
  const plat = binary ? PLATFORM_BINARY.exec(binary)?.[1] : undefined;
  const launcher = real(found);
  if (!plat || !launcher || !LAUNCHER.test(launcher) || launcher === binary) return false;
  for (let dir = launcher.slice(0, -"/bin/awaitless".length); ; dir = dir.slice(0, dir.lastIndexOf("/"))) {
    const candidate = join(dir || "/", "node_modules", "@awaitless", plat, "bin", "awaitless");
    if (existsSync(candidate)) return real(candidate) === binary;
    if (dir === "") return false;
  }
}
