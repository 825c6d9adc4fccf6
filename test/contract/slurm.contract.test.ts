// The backend contract against Slurm jobs on the real test cluster (this machine is its login node).
import { join } from "node:path";
import { run, slurmUp } from "../e2e/slurm-harness.ts";
import { Sandbox } from "../helpers/cli.ts";
import { backendContract } from "./contract.ts";

const available = await slurmUp("Slurm backend contract");
const submitted: string[] = [];

backendContract(
  "slurm",
  async () => {
    const sb = new Sandbox();
    sb.writeConfig(
      `[defaults]\npoll_interval_seconds = 0.5\n[hosts.localhost]\nslurm_job_dir = "${join(sb.root, "cluster")}"\nslurm_accounting_grace = 20\n`,
    );
    const bid = (id: string) => sb.status(id).backend_id as { slurm_job_id?: string; remote_dir: string };
    return {
      sb,
      flags: ["--backend", "slurm", "--host", "localhost", "--slurm-option", "mem=32M"],
      queueFlags: [],
      jobMs: 60_000,
      jobDir: (id) => {
        const b = bid(id);
        if (b.slurm_job_id && !submitted.includes(b.slurm_job_id)) submitted.push(b.slurm_job_id);
        return b.remote_dir;
      },
      async close() {
        if (submitted.length > 0) await run(["scancel", ...submitted]);
        sb.cleanup();
      },
    };
  },
  {
    available,
    queues: false,
    divergences: {
      // Slurm ends the batch step when its wrapper dies and reports FAILED 0:9; the Slurm verdict turns that into
      // failed/signaled exit 137 with no exit record from the wrapper (local and SSH: lost, wrapper_killed).
      lost: "a killed wrapper reads failed/signaled 137 on Slurm, not lost/wrapper_killed",
    },
  },
);
