// The backend contract against SSH jobs on a private OpenSSH sshd (127.0.0.1), as the dash test user.
import { backendContract } from "./contract.ts";
import { sshAvailable, sshTarget } from "./targets.ts";

backendContract("ssh", sshTarget, { available: sshAvailable("SSH backend contract"), queues: true });
