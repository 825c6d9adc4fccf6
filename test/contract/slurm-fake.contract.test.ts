// The backend contract against the Slurm backend with fake scheduler commands on PATH (test/fake-slurm/): the
// batch script runs on this machine at once. Fast, and runnable by anyone (no root, no cluster).
import { backendContract } from "./contract.ts";
import { slurmFakeTarget } from "./targets.ts";

backendContract("slurm (fake scheduler commands)", slurmFakeTarget, {
  available: true,
  queues: false,
  keep: false,
});
