// The backend contract against SSH jobs on a private OpenSSH sshd (127.0.0.1), for a dash and a busybox login shell.
import { backendContract } from "./contract.ts";
import { sshAvailable, sshTarget } from "./targets.ts";

const available = sshAvailable("SSH backend contract");
for (const kind of ["dash", "busybox"] as const) {
  backendContract(`ssh as the ${kind} user`, () => sshTarget(kind), { available, queues: true });
}
