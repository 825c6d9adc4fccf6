// The backend contract against SSH jobs on a private OpenSSH sshd (127.0.0.1), as the dash test user.

import { sshWorld } from "../e2e/ssh-fixture.ts";
import { gateOnAvailability, sshdAvailable } from "../helpers/sshd.ts";
import { backendContract } from "./contract.ts";

const available = gateOnAvailability("SSH backend contract (private OpenSSH server)", sshdAvailable());

backendContract(
  "ssh",
  async () => {
    const w = await sshWorld();
    const host = w.alias.dash;
    return {
      sb: w.sb,
      flags: ["--backend", "ssh", "--host", host],
      queueFlags: ["--host", host],
      jobMs: 20_000,
      jobDir: (id) => w.sb.status(id).backend_id.remote_dir as string,
      close: () => w.close(),
    };
  },
  { available, queues: true },
);
