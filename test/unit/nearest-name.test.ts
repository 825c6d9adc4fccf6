// The one "did you mean" helper shared by MCP arguments, config keys and CLI flags/commands.
import { describe, expect, test } from "bun:test";
import { didYouMean, editDistance, nearestName } from "../../src/core/util/nearest-name.ts";

describe("nearest name", () => {
  test("edit distance counts an adjacent swap as one edit", () => {
    expect(editDistance("cwd", "cwd")).toBe(0);
    expect(editDistance("cwdd", "cwd")).toBe(1);
    expect(editDistance("tiemout", "timeout")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
  });
  test.each([
    ["cwdd", ["command", "cwd", "env"], "cwd"],
    ["limt", ["limit", "host"], "limit"],
    ["timeout", ["timeout_seconds", "inline_timeout_seconds"], "timeout_seconds"],
    ["poll_interval", ["poll_interval_seconds", "grace_period_seconds"], "poll_interval_seconds"],
    ["Host-Name", ["hostname", "host"], "hostname"],
    ["colour", ["job_id"], undefined],
    ["bogus_key", ["hostname", "port", "user"], undefined],
    ["x", ["y", "env"], "y"],
  ] as const)("%p among %p → %p", (given, known, expected) => {
    expect(nearestName(given, known)).toBe(expected);
  });
  test("didYouMean phrases it, or says nothing", () => {
    expect(didYouMean("stauts", ["status", "list"])).toBe(" (did you mean `status`?)");
    expect(didYouMean("frobnicate", ["status", "list"])).toBe("");
  });
});
