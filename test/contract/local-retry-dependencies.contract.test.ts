// Dependencies on a parent with retries, against local jobs (always available).
import { retryDependenciesContract } from "./retry-dependencies-contract.ts";
import { localTarget } from "./targets.ts";

retryDependenciesContract("local", localTarget, true);
