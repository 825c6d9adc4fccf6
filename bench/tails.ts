// The tail check at bench size: many seeded short jobs whose last writes precede exit, on every backend this machine
// has (local, SSH as the dash user, Slurm when it answers), each sealed tail compared with what the job wrote.
// Usage: bun run build && bun bench/tails.ts [--runs N] [--seed S]   (root for SSH: starts a private sshd)
import type { Target } from "../test/contract/contract.ts";
import { runTailCases } from "../test/contract/tail-cases.ts";
import { localTarget, slurmTarget, sshTarget } from "../test/contract/targets.ts";
import { run } from "../test/e2e/slurm-harness.ts";
import { sshdAvailable } from "../test/helpers/sshd.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const runs = flag("--runs", 100);
const seed = flag("--seed", Date.now() % 1_000_000);
const targets: Record<string, () => Promise<Target>> = { local: localTarget };
if (sshdAvailable().ok) targets.ssh = () => sshTarget("dash");
else console.warn("[skip] SSH: the private sshd cannot run here");
const ping = await run(["scontrol", "ping"]).catch(() => undefined);
if (ping?.code === 0 && /UP/.test(ping.stdout) && process.getuid?.() === 0) targets.slurm = slurmTarget;
else console.warn("[skip] Slurm: slurmctld does not answer (or not root)");

let wrong = 0;
for (const [name, setup] of Object.entries(targets)) {
  const t = await setup();
  const started = Date.now();
  try {
    const bad = await runTailCases(t, seed, runs);
    for (const b of bad) console.error(`${name}: ${b}`);
    wrong += bad.length;
    console.log(
      `${name}: ${runs} jobs (seed ${seed}), ${bad.length} tails wrong, ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  } finally {
    await t.close();
  }
}
process.exitCode = wrong === 0 ? 0 : 1;
