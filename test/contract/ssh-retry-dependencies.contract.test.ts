// Dependencies on a parent with retries, against SSH jobs on a private OpenSSH sshd (127.0.0.1), for a dash and a
// busybox login shell.
import { retryDependenciesContract } from "./retry-dependencies-contract.ts";
import { sshAvailable, sshTarget } from "./targets.ts";

const available = sshAvailable("SSH retry dependencies");
for (const kind of ["dash", "busybox"] as const) {
  retryDependenciesContract(`ssh as the ${kind} user`, () => sshTarget(kind), available);
}
