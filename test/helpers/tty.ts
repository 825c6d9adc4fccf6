// Runs the compiled binary under a pseudo-terminal (script(1)) and returns what the terminal received, stdout and
// stderr together: the bytes a person's terminal would act on.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, type Sandbox } from "./cli.ts";
import type { Availability } from "./sshd.ts";

export function scriptAvailable(): Availability {
  const ok = Bun.which("script") !== null && Bun.which("xargs") !== null && process.platform === "linux";
  return { ok, why: ok ? "" : "needs script(1) from util-linux (a pty) and xargs" };
}

/** Bytes a terminal would act on: ESC, C1 controls, bidi marks, embeddings, overrides and isolates. */
export const RAW_TERMINAL = /[\u001b\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * The binary run with `args` in `cwd` under a pty; the screen text (our own erase-line of the progress line left
 * out) and the exit code. The words travel NUL-separated in a file, so no shell quoting touches them.
 */
export function onTty(sb: Sandbox, args: string[], cwd = sb.work): { code: number; screen: string } {
  const argsFile = join(sb.root, `args-${Math.random().toString(36).slice(2)}`);
  writeFileSync(argsFile, [BINARY, ...args].map((a) => `${a}\0`).join(""));
  const codeFile = `${argsFile}.code`;
  const p = Bun.spawnSync(
    [
      "script",
      "-qec",
      `xargs -0 -a '${argsFile}' sh -c 'cd "$0" && "$@"; echo $? > "${codeFile}"' '${cwd}' </dev/null`,
      "/dev/null",
    ],
    { cwd: sb.work, env: { ...sb.env, TERM: "xterm" }, stdout: "pipe", stderr: "pipe", stdin: "ignore" },
  );
  const screen = p.stdout.toString().replaceAll("\r\x1b[K", "");
  return { code: Number(readFileSync(codeFile, "utf8")), screen };
}

/** "clean", or where the first raw terminal byte is (for an assertion that shows it). */
export function rawAt(screen: string): string {
  const m = RAW_TERMINAL.exec(screen);
  if (m === null) return "clean";
  const around = JSON.stringify(screen.slice(Math.max(0, m.index - 60), m.index + 60));
  return `raw U+${m[0].charCodeAt(0).toString(16).padStart(4, "0")} in ${around}`;
}
