// What each backend can do, declared once here (the backends take theirs from it; core asks it by name through
// ServiceSettings.capabilitiesOf). Small and free of imports, so a command that never builds a backend can ask.
import type { BackendCapabilities, CapabilitiesOf } from "../core/backend/backend.ts";
import type { BackendName } from "../core/model/job.ts";

export const BACKEND_CAPABILITIES: Readonly<Record<BackendName, BackendCapabilities>> = {
  /** The wrapper on this machine: it holds queues, locks, dependencies and leftovers itself. */
  local: {
    label: "local",
    runsHere: true,
    remoteJobDir: false,
    schedulesItself: false,
    nativeDependencies: false,
    nativeArrays: false,
    namedQueues: true,
    keepsLeftovers: true,
  },
  /** The same wrapper on an SSH host, in a directory of its own there. */
  ssh: {
    label: "SSH",
    runsHere: false,
    remoteJobDir: true,
    schedulesItself: false,
    nativeDependencies: false,
    nativeArrays: false,
    namedQueues: true,
    keepsLeftovers: true,
  },
  /**
   * Slurm decides when a job starts and allocates its resources (no queues or locks of ours), holds children with
   * --dependency, runs an array as one sbatch --array, and ends every process of a job when its batch script ends.
   */
  slurm: {
    label: "Slurm",
    runsHere: false,
    remoteJobDir: false,
    schedulesItself: true,
    nativeDependencies: true,
    nativeArrays: true,
    namedQueues: false,
    keepsLeftovers: false,
  },
};

export const capabilitiesOf: CapabilitiesOf = (backend) => BACKEND_CAPABILITIES[backend];
