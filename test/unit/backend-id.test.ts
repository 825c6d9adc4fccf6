// A stored backend_id is read as its backend's type once, byte for byte as stored, and a malformed one is refused.
import { describe, expect, test } from "bun:test";
import {
  hostIdOf,
  imported08Of,
  parseBackendId,
  remoteDirOf,
  schedulerJobIdOf,
  slurmIdOf,
  watched08Of,
  wrapperPidOf,
} from "../../src/core/model/backend-id.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

// The shapes each writer stores (key order as written): local-host.ts and ssh-job-host.ts start(), the Slurm launch
// (slurm-backend.ts) with what its observations persist, an array task (slurm-array.ts), and Awaitless 0.8's import.
const STORED = {
  local: ["local", '{"wrapper_pid":4242,"proc_start":"123456"}'],
  ssh: [
    "ssh",
    '{"wrapper_pid":77,"remote_dir":"/home/u/.awaitless/jobs/job_A","proc_start":"99","boot_id":"b-1","remote_shell":"dash"}',
  ],
  slurm: [
    "slurm",
    '{"remote_dir":"/home/u/.awaitless/jobs/job_B","cwd":"/home/u","submitted_at":"2025-01-01T00:00:00.000Z","slurm_job_id":"41","held":true,"completion":"watch"}',
  ],
  adopted: ["slurm", '{"slurm_job_id":"52","adopted":true,"unsettled_since":"2025-01-01T00:00:05.000Z"}'],
  arrayTask: [
    "slurm",
    '{"remote_dir":"/r/jobs/job_C","cwd":"/r","submitted_at":"2025-01-01T00:00:00.000Z","array_tag":"arr_1","array_task":3,"slurm_job_id":"60_3","array_job_id":"60"}',
  ],
  imported: [
    "ssh",
    '{"imported_from":"awaitless-0.8","source":"/old/awaitless.db","logs":"tails kept by 0.8 (full logs stay on the host)","pid":12,"backend_id_08":"x","queue_08":"gpu"}',
  ],
  watched: [
    "local",
    '{"imported_from":"awaitless-0.8","watch":true,"source_dir":"/old","stdout_08":"/old/jobs/j/stdout.log","stderr_08":"/old/jobs/j/stderr.log","pid":5,"pid_start_ticks":null}',
  ],
} as const;

describe("stored backend IDs", () => {
  test("each backend's stored ID reads back byte for byte, unknown fields kept", () => {
    for (const [backend, json] of Object.values(STORED)) {
      expect(JSON.stringify(parseBackendId(backend, json, "job_X"))).toBe(json);
    }
    const later = '{"wrapper_pid":1,"written_by_a_later_version":[1,2]}';
    expect(JSON.stringify(parseBackendId("local", later, "job_X"))).toBe(later);
    // the least an imported row holds (test/local/hostile-import.test.ts plants one)
    expect(JSON.stringify(parseBackendId("local", '{"imported_from":"awaitless-0.8"}', "job_X"))).toBe(
      '{"imported_from":"awaitless-0.8"}',
    );
  });

  test("each reads as its own type, through its own accessor", () => {
    const ref = (k: keyof typeof STORED) => {
      const [backend, json] = STORED[k];
      return { backend, backend_id: parseBackendId(backend, json, "job_X") };
    };
    expect(hostIdOf(ref("local"))?.wrapper_pid).toBe(4242);
    expect(slurmIdOf(ref("local"))).toBeNull();
    expect(hostIdOf(ref("ssh"))?.remote_dir).toBe("/home/u/.awaitless/jobs/job_A");
    expect(remoteDirOf(ref("ssh").backend_id)).toBe("/home/u/.awaitless/jobs/job_A");
    expect(slurmIdOf(ref("slurm"))?.held).toBe(true);
    expect(hostIdOf(ref("slurm"))).toBeNull();
    expect(schedulerJobIdOf(ref("arrayTask").backend_id)).toBe("60_3");
    expect(schedulerJobIdOf(ref("local").backend_id)).toBeUndefined();
    expect(wrapperPidOf(ref("ssh").backend_id)).toBe(77);
    expect(wrapperPidOf(ref("slurm").backend_id)).toBeUndefined();
    expect(imported08Of(ref("imported"))).toMatchObject({ source: "/old/awaitless.db" });
    expect(watched08Of(ref("imported"))).toBeNull();
    expect(watched08Of(ref("watched"))?.source_dir).toBe("/old");
    // an import keeps 0.8's pid, which is not a wrapper of ours
    expect(hostIdOf(ref("imported"))).toBeNull();
    expect(wrapperPidOf(ref("imported").backend_id)).toBeUndefined();
  });

  test("a malformed one is refused with what is wrong, in which job", () => {
    const refused = (backend: string, json: string) => {
      try {
        parseBackendId(backend, json, "job_BAD");
      } catch (e) {
        expect(e).toBeInstanceOf(AwaitlessError);
        return (e as Error).message;
      }
      throw new Error(`accepted ${json} for ${backend}`);
    };
    expect(refused("local", "{not json")).toContain(
      "the stored backend_id of job job_BAD (backend local) is malformed",
    );
    expect(refused("local", "[1]")).toContain("it is [1], not an object");
    expect(refused("local", '{"proc_start":"1"}')).toContain("it has no wrapper_pid");
    expect(refused("ssh", '{"wrapper_pid":"77"}')).toContain('its wrapper_pid is "77", not a number');
    expect(refused("slurm", '{"slurm_job_id":41}')).toContain("its slurm_job_id is 41, not a string");
    expect(refused("slurm", '{"completion":"later"}')).toContain(
      'its completion is "later", not "watch" or "poll"',
    );
    expect(refused("slurm", '{"wrapper_pid":3}')).toContain("it has wrapper_pid");
    expect(refused("ssh", '{"imported_from":"awaitless-0.8","source":7}')).toContain(
      "its source is 7, not a string",
    );
    expect(refused("local", '{"imported_from":"awaitless-0.8","watch":true,"source_dir":"/o"}')).toContain(
      "it has no stdout_08",
    );
    expect(refused("pbs", '{"x":1}')).toContain('the job\'s backend "pbs" is not one this build knows');
  });
});
