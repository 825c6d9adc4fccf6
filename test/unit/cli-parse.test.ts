// CLI option values: durations and sizes, and the errors that say how to write them.
import { describe, expect, test } from "bun:test";
import { parseDuration, parseSize } from "../../src/cli/parse.ts";

describe("parseSize", () => {
  test.each([
    ["0", 0],
    ["1048576", 1_048_576],
    ["512b", 512],
    ["10K", 10_240],
    ["10KB", 10_000],
    ["500M", 524_288_000],
    ["500 MiB", 524_288_000],
    ["2GB", 2_000_000_000],
    ["10GiB", 10_737_418_240],
    ["1.5g", 1_610_612_736],
    ["1T", 1024 ** 4],
  ])("%p → %p bytes", (text, bytes) => {
    expect(parseSize(text, "--max-bytes")).toBe(bytes);
  });

  test.each(["", "-1", "5 parsecs", "1e9", "GiB", "1.2.3M", "10 G B", "0.5"])(
    "%p is refused, naming the flag",
    (text) => {
      expect(() => parseSize(text, "--max-bytes")).toThrow(
        /--max-bytes: (bad size|.* is less than one byte)/,
      );
    },
  );
});

describe("parseDuration", () => {
  test.each([
    ["90", 90],
    ["90s", 90],
    ["10m", 600],
    ["1h30m", 5400],
    ["1.5h", 5400],
    ["250ms", 0.25],
    ["7d", 604_800],
  ])("%p → %p s", (text, seconds) => {
    expect(parseDuration(text, "--timeout")).toBe(seconds);
  });

  test.each(["", "ten", "10x", "5m10", "-5s"])("%p is refused, naming the flag", (text) => {
    expect(() => parseDuration(text, "--timeout")).toThrow(/--timeout: bad duration/);
  });
});
