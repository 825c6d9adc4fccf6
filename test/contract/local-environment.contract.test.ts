// The whole-job part of the backend contract against local jobs tracked by environment (AWAITLESS_TRACKING=
// environment: no cgroup even where one could be made), so that both kinds of tracking run wherever the suite does.
import { backendContract } from "./contract.ts";
import { localTarget } from "./targets.ts";

backendContract("local, tracking by environment", () => localTarget({ AWAITLESS_TRACKING: "environment" }), {
  available: true,
  queues: true,
  only: ["leftovers", "leftovers-failed", "leftovers-cancel", "leftovers-timeout", "keep", "resources"],
});
