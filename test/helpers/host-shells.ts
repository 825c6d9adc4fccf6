// The shells a host program meets, run here as `sh -s` on a host would run it: sh, dash, bash, busybox sh, and busybox
// sh with only busybox utilities on PATH. A name that is the same program as one already listed (sh is dash on Debian)
// is left out: it would run the same bytes twice.
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../src/wrapper/host-scripts.ts";
import { busyboxAppletDir } from "./busybox.ts";

export interface HostShell {
  name: string;
  argv: string[];
  /** PATH for the program (busybox applets only, or a directory of stand-ins first); else this process's. */
  path?: string;
}

/** What a host program printed, as the SSH backends' script runners return it. */
export interface HostRun {
  code: number;
  signal: null;
  stdout: Buffer;
  stderr: Buffer;
}

/** sh, dash, bash and busybox sh as installed (each program once); `scratch` holds the busybox applet directory. */
export function hostShells(scratch: string): HostShell[] {
  const shells: HostShell[] = [];
  const seen = new Set<string>();
  for (const name of ["sh", "dash", "bash"]) {
    const p = Bun.which(name);
    if (p === null || seen.has(realpathSync(p))) continue;
    seen.add(realpathSync(p));
    shells.push({ name, argv: [p, "-s"] });
  }
  const bb = Bun.which("busybox");
  if (bb !== null) {
    shells.push({ name: "busybox sh", argv: [bb, "sh", "-s"] });
    const path = busyboxAppletDir(join(scratch, "busybox-bin"));
    if (path) shells.push({ name: "busybox sh, busybox utilities only", argv: [bb, "sh", "-s"], path });
  }
  return shells;
}

/** Under AWAITLESS_REQUIRE_ALL=1, the error to fail with when busybox (and so the busybox-only host) is missing. */
export function missingBusybox(shells: readonly HostShell[]): string | null {
  if (process.env.AWAITLESS_REQUIRE_ALL !== "1" || shells.some((s) => s.path)) return null;
  return "busybox is missing: apt-get install -y busybox dash";
}

/** Runs host program `body` with `args` under `shell`, its text on stdin. */
export async function runHostScript(
  shell: HostShell,
  body: string,
  args: readonly string[],
): Promise<HostRun> {
  const p = Bun.spawn(shell.argv, {
    stdin: Buffer.from(script(body, args)),
    stdout: "pipe",
    stderr: "pipe",
    env: shell.path ? { ...process.env, PATH: shell.path } : process.env,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).arrayBuffer(),
    new Response(p.stderr).arrayBuffer(),
    p.exited,
  ]);
  return { code, signal: null, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) };
}
