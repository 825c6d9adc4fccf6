// The fault schedule at bench size: many seeded schedules over every backend this machine has (local always; SSH
// and Slurm when test/contract/targets.ts finds them), printing the figure docs/testing.md records.
// Usage: bun run build && bun bench/faults.ts [--runs N] [--seed S]   (root for SSH: starts a private sshd)
import type { Target } from "../test/contract/contract.ts";
import { type Backends, runFaultSchedules, summaryLine } from "../test/contract/fault-schedule.ts";
import { localTarget, slurmTarget, sshTarget } from "../test/contract/targets.ts";
import { run } from "../test/e2e/slurm-harness.ts";
import { sshdAvailable } from "../test/helpers/sshd.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const runs = flag("--runs", 100);
const seed = flag("--seed", Date.now() % 1_000_000);
const backends: Backends = { local: await localTarget() };
if (sshdAvailable().ok) backends.ssh = await sshTarget();
else console.warn("[skip] SSH: the private sshd cannot run here");
const ping = await run(["scontrol", "ping"]).catch(() => undefined);
if (ping?.code === 0 && /UP/.test(ping.stdout) && process.getuid?.() === 0)
  backends.slurm = await slurmTarget();
else console.warn("[skip] Slurm: slurmctld does not answer (or not root)");

const started = Date.now();
try {
  const s = await runFaultSchedules(backends, seed, runs);
  for (const v of s.violations) console.error(`violation (seed ${v.seed}, ${v.backend}): ${v.what}`);
  console.log(
    `backends: ${Object.keys(backends).join(", ")}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
  console.log(summaryLine(s, seed));
  process.exitCode = s.violations.length === 0 ? 0 : 1;
} finally {
  for (const t of Object.values(backends) as Target[]) await t.close();
}
