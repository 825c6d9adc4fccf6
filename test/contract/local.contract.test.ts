// The backend contract against local jobs (always available).
import { backendContract } from "./contract.ts";
import { localTarget } from "./targets.ts";

backendContract("local", localTarget, { available: true, queues: true });
