// A retried Slurm array task's later attempt is a single Slurm job: it is given its first attempt's
// SLURM_ARRAY_TASK_ID (arrayTaskEnv in src/core/retries/retry-policy.ts), read from that attempt's Slurm ID ARRAYJOB_TASK.
import { describe, expect, test } from "bun:test";
import { BACKEND_CAPABILITIES } from "../../src/backends/capabilities.ts";
import { arrayTaskEnv } from "../../src/core/retries/retry-policy.ts";

describe("arrayTaskEnv", () => {
  test("a Slurm array task's first attempt (ARRAYJOB_TASK) gives its task ID", () => {
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, { slurm_job_id: "1663_7" })).toEqual({
      SLURM_ARRAY_TASK_ID: "7",
    });
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, { slurm_job_id: "12_0" })).toEqual({
      SLURM_ARRAY_TASK_ID: "0",
    });
  });
  test("nothing for a single Slurm job, a first attempt not submitted, or another backend", () => {
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, { slurm_job_id: "1663" })).toEqual({});
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, { slurm_job_id: "1663_[1-3]" })).toEqual({});
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, null)).toEqual({});
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.slurm, {})).toEqual({});
    expect(arrayTaskEnv(BACKEND_CAPABILITIES.ssh, { slurm_job_id: "1663_7" })).toEqual({});
  });
});
