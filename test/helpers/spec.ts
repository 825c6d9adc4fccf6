// A plain local JobSpec (`true` in `/`, nothing else set), for tests and benchmarks that need a valid spec.
import type { JobSpec } from "../../src/core/model/job.ts";

export function plainSpec(over: Partial<JobSpec> = {}): JobSpec {
  return {
    argv: ["true"],
    cwd: "/",
    env: {},
    secret_env: [],
    backend: "local",
    host: null,
    queue: null,
    timeout_seconds: null,
    stall_timeout_seconds: null,
    artifacts: [],
    slurm_options: {},
    name: null,
    ...over,
  };
}
