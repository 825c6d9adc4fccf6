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
import { AwaitlessError } from "../../src/core/errors.ts";

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
  gres: ["gpu", "gpu:2", "gpu:a100:1", "gpu:a100:1,nvme:1"],
  mem: ["0", "500", "500M", "16G", "2T", "1024K"],
  nodes: ["1", "2-4", "3-3"],
  ntasks: ["8"],
  partition: ["gpu", "gpu,cpu"],
  qos: ["high"],
  time: ["90", "1:30", "01:30:00", "2-00", "2-12:30", "1-00:00:01"],
};
const BAD: Record<string, string[]> = {
  account: ["", "a b", "a;rm -rf ~", "$(id)", "x\ny"],
  constraint: ["", "&a", "a&", "a&&b", "[a", "a]", "[[a]]", "a b", "a;b", "a\n", "a*0", "`x`"],
  cpus_per_task: ["0", "-1", "1.5", "two", "1 "],
  gres: ["", "gpu:", ":2", "gpu:2,", "gpu 2", "gpu:a100:1:2"],
  mem: ["16GB", "16g", "-1", "1.5G", "16 G", "G", "16G\n"],
  nodes: ["0", "4-2", "1-", "-3", "1,2"],
  ntasks: ["0", "x"],
  partition: ["gpu,", ",gpu", "gpu cpu", "gpu|cpu"],
  qos: ["a,b", "a'b"],
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
