// Tests the Slurm option allowlist: per-key formats, error messages and hints, merging, time conversions.
import { describe, expect, test } from "bun:test";
import {
  formatSlurmTime,
  mergeSlurmOptions,
  SLURM_OPTION_KEYS,
  slurmOptionArgs,
  slurmOptionFlag,
  slurmTimeToSeconds,
  validateSlurmOptions,
} from "../../src/backends/slurm/slurm-options.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

function rejection(raw: Record<string, unknown>): AwaitlessError {
  try {
    validateSlurmOptions(raw);
  } catch (error) {
    if (error instanceof AwaitlessError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
}

const GOOD: Record<string, string[]> = {
  account: ["proj-42", "a.b_c"],
  constraint: ["a100", "a100&ib", "intel|amd", "[rack1*2&rack2*4]", "x,y", "gpu&[a|b]"],
  cpus_per_task: ["1", "64"],
  exclusive: ["yes", "true", "user", "mcs", "no", "false"],
  gpus: ["1", "8", "a100:2", "tesla_v100:1"],
  gpus_per_node: ["4", "a100:4"],
  gpus_per_task: ["1", "h100:1"],
  gres: ["gpu", "gpu:2", "gpu:a100:1", "gpu:a100:1,nvme:1"],
  licenses: ["matlab", "matlab:2", "ansys@flex:1", "ansys@flex:1,comsol", "a.b_c-d:10"],
  mem: ["0", "500", "500M", "16G", "2T", "1024K"],
  mem_per_cpu: ["0", "4000", "4G", "512M"],
  nodes: ["1", "2-4", "3-3"],
  ntasks: ["8"],
  partition: ["gpu", "gpu,cpu"],
  qos: ["high"],
  reservation: ["maint", "root_5", "a,b"],
  time: ["90", "1:30", "01:30:00", "2-00", "2-12:30", "1-00:00:01"],
};
const BAD: Record<string, string[]> = {
  account: ["", "a b", "a;rm -rf ~", "$(id)", "x\ny"],
  constraint: ["", "&a", "a&", "a&&b", "[a", "a]", "[[a]]", "a b", "a;b", "a\n", "a*0", "`x`"],
  cpus_per_task: ["0", "-1", "1.5", "two", "1 "],
  exclusive: ["", "1", "YES", "topo", "user,mcs", "yes\n", "--wrap=x"],
  gpus: ["", "0", "a100:0", "a100:", ":2", "-1", "2 ", "a100:2:1", "gpu;id", "a100:2,v100:1"],
  gpus_per_node: ["0", "x:0", "four"],
  gpus_per_task: ["0", "1.5", "$(id)"],
  gres: ["", "gpu:", ":2", "gpu:2,", "gpu 2", "gpu:a100:1:2"],
  licenses: ["", "matlab:0", "matlab:", ":2", "a,", ",a", "a b", "a@", "a@b@c", "a|b", "a;b"],
  mem: ["16GB", "16g", "-1", "1.5G", "16 G", "G", "16G\n"],
  mem_per_cpu: ["4GB", "4g", "-1", "1.5G", "", "4G,"],
  nodes: ["0", "4-2", "1-", "-3", "1,2"],
  ntasks: ["0", "x"],
  partition: ["gpu,", ",gpu", "gpu cpu", "gpu|cpu"],
  qos: ["a,b", "a'b"],
  reservation: ["", "a b", "a,", "a;b", "`x`"],
  time: ["0", "00:00", "1:60", "1:00:60", "1-24", "1-00:60", "1h", "1:2:3:4", "UNLIMITED", "-1", ""],
};

describe("validateSlurmOptions", () => {
  for (const [key, values] of Object.entries(GOOD)) {
    test(`accepts good ${key} values`, () => {
      for (const value of values) expect(validateSlurmOptions({ [key]: value })).toEqual({ [key]: value });
    });
  }
  for (const [key, values] of Object.entries(BAD)) {
    test(`rejects bad ${key} values naming key, value and the accepted format`, () => {
      for (const value of values) {
        const error = rejection({ [key]: value });
        expect(error.code).toBe("invalid_argument");
        expect(error.message).toContain(key);
        expect(error.message).toContain(JSON.stringify(value));
        expect(error.hint).toContain(`${key} takes`);
      }
    });
  }

  test("the bad and good tables cover every allowed key", () => {
    expect(Object.keys(GOOD).sort()).toEqual([...SLURM_OPTION_KEYS].sort());
    expect(Object.keys(BAD).sort()).toEqual([...SLURM_OPTION_KEYS].sort());
  });

  test("unknown keys are rejected with the allowlist in the hint", () => {
    const error = rejection({ wrap: "rm -rf ~" });
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain('"wrap"');
    expect(error.hint).toContain("account, constraint, cpus_per_task");
  });

  test("a misspelt key gets the nearest allowed key", () => {
    expect(rejection({ gpu: "2" }).message).toBe('Unknown slurm option "gpu" (did you mean `gpus`?).');
    expect(rejection({ "mem-per-cpus": "4G" }).message).toContain("(did you mean `mem_per_cpu`?)");
    expect(rejection({ reservaton: "x" }).message).toContain("(did you mean `reservation`?)");
    expect(rejection({ license: "x" }).message).toContain("(did you mean `licenses`?)");
    expect(rejection({ wrap: "x" }).message).not.toContain("did you mean");
  });

  test("mem and mem_per_cpu together are refused (sbatch takes one)", () => {
    const error = rejection({ mem: "4G", "mem-per-cpu": "1G" });
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toContain("mem and mem_per_cpu");
    expect(error.hint).toBe("Give mem (per node) or mem_per_cpu (per CPU), not both.");
  });

  test("hyphenated keys normalise to underscores; integers become strings", () => {
    expect(validateSlurmOptions({ "cpus-per-task": 4, mem: "8G" })).toEqual({
      cpus_per_task: "4",
      mem: "8G",
    });
  });

  test("a key given twice (both spellings) is rejected", () => {
    expect(rejection({ cpus_per_task: "1", "cpus-per-task": "2" }).message).toContain("twice");
  });

  test("non-string values are rejected", () => {
    for (const value of [1.5, -1, true, null, ["1"], { a: 1 }]) {
      expect(rejection({ ntasks: value }).code).toBe("invalid_argument");
    }
  });

  test("the origin appears in the message", () => {
    try {
      validateSlurmOptions({ mem: "lots" }, "[hosts.cluster.slurm] key");
      throw new Error("not rejected");
    } catch (error) {
      expect((error as Error).message).toContain("[hosts.cluster.slurm] key mem");
    }
  });
});

describe("mergeSlurmOptions", () => {
  test("per-job overrides win per key over host defaults", () => {
    expect(mergeSlurmOptions({ partition: "cpu", time: "60", mem: "4G" }, { time: "2:00:00" })).toEqual({
      partition: "cpu",
      time: "2:00:00",
      mem: "4G",
    });
  });
  test("a per-job memory request replaces the host's default in either form", () => {
    expect(mergeSlurmOptions({ mem: "4G", partition: "cpu" }, { mem_per_cpu: "2G" })).toEqual({
      partition: "cpu",
      mem_per_cpu: "2G",
    });
    expect(mergeSlurmOptions({ mem_per_cpu: "2G" }, { mem: "8G" })).toEqual({ mem: "8G" });
    expect(mergeSlurmOptions({ mem_per_cpu: "2G" }, { gpus: "1" })).toEqual({ mem_per_cpu: "2G", gpus: "1" });
  });
  test("exclusive=no in a job overrides a host default exclusive=yes (no flag)", () => {
    const merged = mergeSlurmOptions({ exclusive: "yes" }, { exclusive: "no" });
    expect(slurmOptionArgs(merged)).toEqual([]);
  });
  test("bad host defaults are reported as such", () => {
    expect(() => mergeSlurmOptions({ mem: "x" }, {})).toThrow(/host default slurm option mem/);
  });
});

describe("flags and times", () => {
  test("flags use Slurm's hyphenated names, in allowlist order", () => {
    expect(slurmOptionFlag("cpus_per_task")).toBe("--cpus-per-task");
    expect(slurmOptionArgs({ time: "10", cpus_per_task: "2", account: "a" })).toEqual([
      "--account=a",
      "--cpus-per-task=2",
      "--time=10",
    ]);
  });
  test("new flags: GPUs, memory per CPU, exclusive forms, reservation, licenses", () => {
    expect(
      slurmOptionArgs(
        validateSlurmOptions({
          gpus: "a100:2",
          gpus_per_node: 2,
          "gpus-per-task": "1",
          mem_per_cpu: "4G",
          reservation: "maint",
          licenses: "matlab@flex:2,comsol",
          exclusive: "yes",
        }),
      ),
    ).toEqual([
      "--exclusive",
      "--gpus=a100:2",
      "--gpus-per-node=2",
      "--gpus-per-task=1",
      "--licenses=matlab@flex:2,comsol",
      "--mem-per-cpu=4G",
      "--reservation=maint",
    ]);
    expect(slurmOptionArgs({ exclusive: "true" })).toEqual(["--exclusive"]);
    expect(slurmOptionArgs({ exclusive: "user" })).toEqual(["--exclusive=user"]);
    expect(slurmOptionArgs({ exclusive: "mcs" })).toEqual(["--exclusive=mcs"]);
    expect(slurmOptionArgs({ exclusive: "false" })).toEqual([]);
  });
  test("slurmTimeToSeconds reads every accepted format", () => {
    expect(slurmTimeToSeconds("90")).toBe(5400);
    expect(slurmTimeToSeconds("1:30")).toBe(90);
    expect(slurmTimeToSeconds("01:30:00")).toBe(5400);
    expect(slurmTimeToSeconds("2-00")).toBe(172800);
    expect(slurmTimeToSeconds("2-12:30")).toBe(2 * 86400 + 12 * 3600 + 1800);
    expect(slurmTimeToSeconds("1-00:00:01")).toBe(86401);
    expect(slurmTimeToSeconds("0:00")).toBeUndefined();
  });
  test("formatSlurmTime rounds up to whole minutes and round-trips", () => {
    expect(formatSlurmTime(1)).toBe("0-00:01:00");
    expect(formatSlurmTime(61)).toBe("0-00:02:00");
    expect(formatSlurmTime(86400 + 3600)).toBe("1-01:00:00");
    for (const s of [60, 3600, 90061]) {
      expect(slurmTimeToSeconds(formatSlurmTime(s))).toBe(Math.ceil(s / 60) * 60);
    }
  });
});
