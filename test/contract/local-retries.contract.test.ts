// Retries against local jobs (always available).
import { retriesContract } from "./retries-contract.ts";
import { localTarget } from "./targets.ts";

retriesContract("local", localTarget, true);
