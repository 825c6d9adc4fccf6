// The grep pattern guard: exponential shapes are refused before they run, ordinary patterns pass and still work.
import { describe, expect, test } from "bun:test";
import { assertBoundedPattern, MAX_GREP_PATTERN_CHARS } from "../../src/core/logs/pattern-guard.ts";
import { AwaitlessError } from "../../src/core/model/errors.ts";

function refusal(pattern: string): AwaitlessError | undefined {
  try {
    assertBoundedPattern(pattern);
    return undefined;
  } catch (err) {
    if (err instanceof AwaitlessError) return err;
    throw err;
  }
}

describe("assertBoundedPattern", () => {
  const refused = [
    "^(a+)+$",
    "(a*)*",
    "(a|a)*b",
    "(a|aa)+$",
    "(?:x+y?)+",
    "((a)+)*",
    "((a|b))+",
    "(.*,){12}x",
    "(\\w+\\s?)+$",
    "(a+){2,}",
    "(a+)+?",
    "(a)\\1",
    "(?<x>a)\\k<x>",
    "a(?=b)",
    "a(?!b)",
    "(?<=a)b",
    "(?<!a)b",
  ];
  for (const p of refused) {
    test(`refuses ${p}`, () => {
      const err = refusal(p);
      expect(err?.code).toBe("invalid_argument");
      expect(err?.message).toContain(JSON.stringify(p));
      expect(err?.hint).toContain("Rewrite");
    });
  }

  const accepted = [
    "error|FAIL",
    "^\\d+-\\d+ .*ERROR",
    "(error|warn): .*",
    "(ab)+",
    "(a+)?",
    "(a+){1}",
    "(a+){0,1}x",
    "[(+*)]+",
    "\\(a+\\)+",
    "a{2,5}b*",
    "[a-z]+[0-9]*",
    "(?:foo)+bar",
    "x\\d{3}",
    "\\\\(a)",
    "{",
  ];
  for (const p of accepted) {
    test(`accepts ${p}`, () => {
      expect(refusal(p)).toBeUndefined();
    });
  }

  test("the group named in the refusal is the repeated one", () => {
    expect(refusal("x(a+)+y")?.message).toContain("the group (a+) is repeated and itself repeats");
    expect(refusal("(a|b)*")?.message).toContain("the group (a|b) is repeated and alternates");
  });

  test("over-long patterns are refused", () => {
    expect(refusal("a".repeat(MAX_GREP_PATTERN_CHARS))).toBeUndefined();
    expect(refusal("a".repeat(MAX_GREP_PATTERN_CHARS + 1))?.message).toContain("characters");
  });
});
