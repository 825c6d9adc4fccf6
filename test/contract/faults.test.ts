// The randomized fault schedule over every backend this machine has: AWAITLESS_FAULT_RUNS schedules (default 12)
// from AWAITLESS_FAULT_SEED (default: the clock); each violation names its seed, so
// `AWAITLESS_FAULT_SEED=<seed> AWAITLESS_FAULT_RUNS=1` replays it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Target } from "./contract.ts";
import { type Backends, runFaultSchedules, summaryLine } from "./fault-schedule.ts";
import { localTarget, slurmAvailable, slurmTarget, sshAvailable, sshTarget } from "./targets.ts";

const runs = Number(process.env.AWAITLESS_FAULT_RUNS ?? 12);
const baseSeed = Number(process.env.AWAITLESS_FAULT_SEED ?? Date.now() % 1_000_000);
const withSsh = sshAvailable("SSH faults of the fault schedule");
const withSlurm = await slurmAvailable("Slurm faults of the fault schedule");

const backends: Backends = {};
beforeAll(async () => {
  backends.local = await localTarget();
  if (withSsh) backends.ssh = await sshTarget();
  if (withSlurm) backends.slurm = await slurmTarget();
});
afterAll(async () => {
  for (const t of Object.values(backends) as Target[]) await t.close();
});

test(`${runs} seeded fault schedules keep every invariant`, async () => {
  const s = await runFaultSchedules(backends, baseSeed, runs);
  console.log(summaryLine(s, baseSeed));
  for (const v of s.violations) console.error(`violation (seed ${v.seed}, ${v.backend}): ${v.what}`);
  expect(s.schedules).toBe(runs);
  expect(s.violations).toEqual([]);
}, 600_000);
