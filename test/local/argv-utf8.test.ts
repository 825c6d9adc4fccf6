// Argument bytes through the compiled binary: valid UTF-8 (a literal U+FFFD included) reaches the job byte for
// byte; an argument that is not valid UTF-8 is refused before anything is created (Linux reads the raw bytes
// from /proc/self/cmdline); an inherited variable that is not valid UTF-8 arrives as documented (U+FFFD).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { BINARY, Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

/** Runs the binary through sh, with `args` as shell words (so printf can put any byte in them). */
function viaShell(args: string, env: Record<string, string> = {}) {
  const p = Bun.spawnSync(["sh", "-c", `exec "$0" ${args}`, BINARY], {
    cwd: sb.work,
    env: { ...sb.env, ...env },
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** The bytes the job received as its first argument, via od inside the job. */
function receivedHex(word: string): string {
  const r = viaShell(
    `run --json -- sh -c 'printf %s "$1" | od -An -tx1 | tr -s " \\n" "  "' sh "$(printf '${word}')"`,
  );
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout).result.stdout_tail as string).trim();
}

const onLinux = existsSync("/proc/self/cmdline");

describe("argument bytes", () => {
  test("valid UTF-8, a literal U+FFFD included, reaches the job byte for byte", () => {
    expect(receivedHex("\\303\\251 \\357\\277\\275 \\360\\237\\230\\200")).toBe(
      "c3 a9 20 ef bf bd 20 f0 9f 98 80",
    );
  });

  const invalid = {
    "a lone 0xff": "a\\377b",
    "an overlong '/'": "\\300\\257",
    "an encoded surrogate": "\\355\\240\\200",
    "a truncated sequence": "x\\342\\202",
  };
  for (const [what, word] of Object.entries(invalid)) {
    test.if(onLinux)(`an argument with ${what} is refused (exit 2), and no job is created`, () => {
      const before = sb.jobCount();
      const r = viaShell(`submit -- printf %s "$(printf '${word}')"`);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("is not valid UTF-8 (bytes: ");
      expect(r.stderr).toContain("hint: pass such bytes through a shell inside the job");
      expect(sb.jobCount()).toBe(before);
    });
  }

  test.if(onLinux)("an --env value that is not valid UTF-8 is refused too", () => {
    const r = viaShell(`submit --env "X=$(printf '\\377')" -- true`);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("argument 3");
  });

  test("the documented bytes of printf inside the job pass through unchanged", () => {
    const r = viaShell(`run --json -- sh -c 'exec printf "\\377" | od -An -tx1'`);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout).result.stdout_tail as string).trim()).toBe("ff");
  });

  test("an inherited variable that is not valid UTF-8 arrives with each bad sequence as U+FFFD (documented)", () => {
    const p = Bun.spawnSync(
      [
        "sh",
        "-c",
        `AWL_BYTES="$(printf 'a\\377b\\355\\240\\200')" exec "$0" run --json -- sh -c 'printf %s "$AWL_BYTES" | od -An -tx1 | tr -s " \\n" "  "'`,
        BINARY,
      ],
      { cwd: sb.work, env: sb.env },
    );
    expect(p.exitCode).toBe(0);
    const hex = (JSON.parse(p.stdout.toString()).result.stdout_tail as string).trim();
    expect(hex).toBe(
      Buffer.from(new TextDecoder().decode(Buffer.from([0x61, 0xff, 0x62, 0xed, 0xa0, 0x80])))
        .toString("hex")
        .replace(/(..)(?!$)/g, "$1 "),
    );
  });
});
