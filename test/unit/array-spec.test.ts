// The array index language: ranges, lists, steps, the %N throttle, bounds and task addresses.
import { describe, expect, test } from "bun:test";
import { MAX_ARRAY_TASKS, parseArraySpec, parseTaskAddress } from "../../src/core/arrays/array-spec.ts";

describe("parseArraySpec", () => {
  test.each([
    ["0-4", [0, 1, 2, 3, 4], 5],
    ["1,3,5", [1, 3, 5], 3],
    ["0-20:5", [0, 5, 10, 15, 20], 5],
    ["0-9:4%2", [0, 4, 8], 2],
    ["7", [7], 1],
    ["5,1,3-4,1", [1, 3, 4, 5], 4],
    ["0-99%8", Array.from({ length: 100 }, (_, i) => i), 8],
    ["0-2%50", [0, 1, 2], 3],
    [" 2-3 ", [2, 3], 2],
  ])("%p → indices and throttle", (text, indices, throttle) => {
    expect(parseArraySpec(text)).toEqual({ indices, throttle });
  });

  test.each([
    ["", "empty array specification"],
    ["5-1", "ends before it starts"],
    ["0-4:0", "step 0"],
    ["0-4%0", "bad array throttle %0"],
    ["0-4%", "bad array throttle %"],
    ["0-4%x", "bad array throttle %x"],
    ["-1", "bad array element"],
    ["1,,2", "bad array element"],
    ["1-2-3", "bad array index"],
    ["0-4%1%2", "more than one %"],
    ["0-4000001", "above 4000000"],
    [`0-${MAX_ARRAY_TASKS}`, `more than ${MAX_ARRAY_TASKS} tasks`],
    ["0-6000,6001-12000", `more than ${MAX_ARRAY_TASKS} tasks`],
  ])("%p is refused (%s)", (text, words) => {
    expect(() => parseArraySpec(text)).toThrow(words);
  });

  test("the largest array is accepted", () => {
    expect(parseArraySpec(`0-${MAX_ARRAY_TASKS - 1}`).indices.length).toBe(MAX_ARRAY_TASKS);
  });
});

describe("parseTaskAddress", () => {
  test("ARRAY_ID.INDEX splits at the last dot; anything else is no address", () => {
    expect(parseTaskAddress("job_01ABC.7")).toEqual({ arrayId: "job_01ABC", index: 7 });
    expect(parseTaskAddress("job_01ABC")).toBeUndefined();
    expect(parseTaskAddress("job_01ABC.x")).toBeUndefined();
    expect(parseTaskAddress("job_01ABC[7]")).toBeUndefined();
  });
});
