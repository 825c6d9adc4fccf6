// The backend contract against Slurm jobs on the real test cluster (this machine is its login node).
import { backendContract } from "./contract.ts";
import { slurmAvailable, slurmTarget } from "./targets.ts";

backendContract("slurm", slurmTarget, {
  available: await slurmAvailable("Slurm backend contract"),
  queues: false,
  keep: false,
});
