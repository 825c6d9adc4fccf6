// Dependencies on a parent with retries, against SSH jobs on a private OpenSSH sshd (127.0.0.1), as the dash user.
import { retryDependenciesContract } from "./retry-dependencies-contract.ts";
import { sshAvailable, sshTarget } from "./targets.ts";

retryDependenciesContract(
  "ssh as the dash user",
  () => sshTarget("dash"),
  sshAvailable("SSH retry dependencies"),
);
