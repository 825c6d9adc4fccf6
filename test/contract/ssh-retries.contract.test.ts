// Retries against SSH jobs on a private OpenSSH sshd (127.0.0.1), as the dash test user.
import { retriesContract } from "./retries-contract.ts";
import { sshAvailable, sshTarget } from "./targets.ts";

retriesContract("ssh as the dash user", () => sshTarget("dash"), sshAvailable("SSH retries"));
