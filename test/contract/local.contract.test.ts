// The backend contract against local jobs (always available).
import { Sandbox } from "../helpers/cli.ts";
import { backendContract } from "./contract.ts";

backendContract(
  "local",
  async () => {
    const sb = new Sandbox();
    return {
      sb,
      flags: [],
      queueFlags: [],
      jobMs: 15_000,
      jobDir: (id) => sb.run(["inspect", "--json", id]).json.job_dir as string,
      async close() {
        sb.cleanup();
      },
    };
  },
  { available: true, queues: true },
);
