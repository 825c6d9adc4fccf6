// The sealed result's tails hold the last bytes the command wrote before its exit was recorded, on every backend
// this machine has (local, SSH as the dash and busybox users, fake and real Slurm): a seeded stress of short jobs
// whose last write comes right before exit, and a submitting client killed between the launch and storing it.
// AWAITLESS_TAIL_RUNS jobs per backend (default 6), AWAITLESS_TAIL_SEED the seed (default: the clock).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CliResult } from "../helpers/cli.ts";
import type { Target } from "./contract.ts";
import { runTailCases } from "./tail-cases.ts";
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
      expect(await runTailCases(t, seed, runs)).toEqual([]);
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
