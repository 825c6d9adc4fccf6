// The sealed result's tails hold the last bytes the command wrote before its exit was recorded, on every backend
// this machine has (local, SSH as the dash and busybox users, fake and real Slurm): a seeded stress of short jobs
// whose last write comes right before exit, and a submitting client killed between the launch and storing it.
// AWAITLESS_TAIL_RUNS jobs per backend (default 6), AWAITLESS_TAIL_SEED the seed (default: the clock).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CliResult } from "../helpers/cli.ts";
import type { Target } from "./contract.ts";
import {
  localTarget,
  slurmAvailable,
  slurmFakeTarget,
  slurmTarget,
  sshAvailable,
  sshTarget,
} from "./targets.ts";

const runs = Number(process.env.AWAITLESS_TAIL_RUNS ?? 6);
const seed = Number(process.env.AWAITLESS_TAIL_SEED ?? Date.now() % 1_000_000);
const withSsh = sshAvailable("SSH tails");
const withSlurm = await slurmAvailable("Slurm tails");

/** mulberry32, as in the fault schedule: a case list is reproduced from its seed alone. */
function rng(s: number): () => number {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  script: string;
  /** What stdout must end with, and its whole size in bytes. */
  outEnd: string;
  outBytes: number;
  errEnd: string;
}

/** One job whose last writes (stdout and stderr, with or without a final newline, small or large) precede its exit. */
function tailCase(rand: () => number, n: number): Case {
  const bulk = [0, 1, 4096, 65_536 + 17, 300_001][Math.floor(rand() * 5)]!;
  const newline = rand() < 0.5 ? "\\n" : "";
  const last = `last-${seed}-${n}`;
  const err = `err-${seed}-${n}`;
  // the bulk and the last line in one write (printf) or two; stderr last, or stdout last
  const fill = bulk === 0 ? "" : `head -c ${bulk} /dev/zero | tr '\\0' x; `;
  const outFirst = rand() < 0.5;
  const out = `${fill}printf '${last}${newline}'`;
  const script = `${outFirst ? `${out}; printf '${err}' >&2` : `printf '${err}' >&2; ${out}`}; exit 0`;
  return {
    script,
    outEnd: `${last}${newline ? "\n" : ""}`,
    outBytes: bulk + last.length + (newline ? 1 : 0),
    errEnd: err,
  };
}

function backendTails(name: string, setup: () => Promise<Target>, available = true): void {
  describe.skipIf(!available)(`tails: ${name}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await setup();
    });
    afterAll(async () => {
      await t?.close();
    });

    test(`${runs} short jobs (seed ${seed}): each tail ends with the command's last bytes`, async () => {
      const rand = rng(seed);
      const cases = Array.from({ length: runs }, (_, n) => tailCase(rand, n));
      const ids = cases.map((c) => t.sb.submit(["sh", "-c", c.script], t.flags));
      for (const [i, id] of ids.entries()) {
        const c = cases[i]!;
        const r = await t.sb.runAsync(["wait", "--json", id]);
        const out = String(r.json.stdout_tail);
        const got = { state: r.json.state, bytes: r.json.stdout_bytes, end: out.slice(-c.outEnd.length) };
        expect({ script: c.script, ...got }).toEqual({
          script: c.script,
          state: "succeeded",
          bytes: c.outBytes,
          end: c.outEnd,
        });
        expect(r.json.stderr_tail).toEndWith(c.errEnd);
      }
    }, 240_000);

    test("a submitting client killed between the launch and storing it: the result still holds the exit and tail", async () => {
      const args = [
        "submit",
        "--json",
        ...t.flags,
        "--client-request-id",
        `tails-crash-${seed}`,
        "--",
        "sh",
        "-c",
        `printf 'first\\n'; sleep 1; printf 'last-${seed}'`,
      ];
      const crashed = await t.sb.runAsync(args, { env: { AWAITLESS_TEST_CRASH_AFTER_LAUNCH: "1" } });
      expect(crashed.code).toBe(98);
      const again = await t.sb.runAsync(args);
      expect(again.code).toBe(0);
      const r: CliResult = await t.sb.runAsync(["wait", "--json", again.json.job_id]);
      expect(r.json).toMatchObject({
        state: "succeeded",
        exit_code: 0,
        stdout_tail: `first\nlast-${seed}`,
        stdout_bytes: 6 + `last-${seed}`.length,
      });
    }, 180_000);
  });
}

backendTails("local", localTarget);
backendTails("ssh (dash)", () => sshTarget("dash"), withSsh);
backendTails("ssh (busybox)", () => sshTarget("busybox"), withSsh);
backendTails("slurm (fake scheduler commands)", slurmFakeTarget);
backendTails("slurm", slurmTarget, withSlurm);
