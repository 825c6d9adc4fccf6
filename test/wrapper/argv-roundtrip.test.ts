// Property test: any argv (quotes, newlines, $, backticks, \, unicode, empty, leading -) reaches the command
// byte-for-byte through renderSpec + wrapper.sh, under each shell.

import { expect, test } from "bun:test";
import { describeEachShell, helperScript, newJob } from "./harness.ts";

const CASES = 210;
const BATCH = 30;

const FRAGMENTS = [
  "'",
  '"',
  "\n",
  "$",
  "`",
  "\\",
  " ",
  "\t",
  "*",
  "?",
  "[a]",
  "~",
  "-",
  "--",
  "$(id)",
  "$" + "{HOME}",
  "$1",
  "$@",
  "!",
  "#",
  ";",
  "&&",
  "|",
  "<>",
  "'\\''",
  "ü",
  "✓",
  "🚀",
  "\u202e",
  "\u0001",
  "\u007f",
  "\r",
  "%s",
  "\\0",
  "abc",
  "=",
];

// Small deterministic PRNG (mulberry32) so a failing case can be reproduced from the seed in the test name.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generateArgvs(seed: number, count: number): string[][] {
  const next = random(seed);
  const pick = (n: number) => Math.floor(next() * n);
  const argvs: string[][] = [];
  for (let i = 0; i < count; i++) {
    const args: string[] = [];
    const argCount = pick(7);
    for (let a = 0; a < argCount; a++) {
      let arg = next() < 0.2 ? "-" : "";
      const parts = pick(8);
      for (let p = 0; p < parts; p++) arg += FRAGMENTS[pick(FRAGMENTS.length)]!;
      args.push(arg);
    }
    argvs.push(args);
  }
  return argvs;
}

const SEED = 20240601;

describeEachShell("argv round-trip", (shell) => {
  test(`${CASES} generated argvs arrive byte-for-byte (seed ${SEED})`, async () => {
    const dump = helperScript("argv-dump.sh", 'for arg do printf "%s\\0" "$arg"; done');
    const argvs = generateArgvs(SEED, CASES);
    argvs[0] = [];
    argvs[1] = [""];
    argvs[2] = ["", "", "-", "--", "-n", "-e", "--help"];
    for (let start = 0; start < argvs.length; start += BATCH) {
      await Promise.all(
        argvs.slice(start, start + BATCH).map(async (args) => {
          await using job = newJob().start(shell, { argv: [dump, ...args] });
          const exit = await job.exit();
          const expected = new TextEncoder().encode(args.map((arg) => `${arg}\0`).join(""));
          expect({ args, exitCode: exit.exitCode, stdout: job.bytes("stdout") }).toEqual({
            args,
            exitCode: 0,
            stdout: expected,
          });
        }),
      );
    }
  }, 120_000);
});
