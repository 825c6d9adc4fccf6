// The backend contract against Slurm jobs on the real test cluster (this machine is its login node).
import { backendContract } from "./contract.ts";
import { slurmAvailable, slurmTarget } from "./targets.ts";

backendContract("slurm", slurmTarget, {
  available: await slurmAvailable("Slurm backend contract"),
  queues: false,
  divergences: {
    // Slurm ends the batch step when its wrapper dies and reports FAILED 0:9; the Slurm verdict turns that into
    // failed/signaled exit 137 with no exit record from the wrapper (local and SSH: lost, wrapper_killed).
    lost: "a killed wrapper reads failed/signaled 137 on Slurm, not lost/wrapper_killed",
  },
});
