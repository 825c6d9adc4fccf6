// Bad input to issue 17's options (--retries, --retry-on, --retry-backoff, --after, --array) through the binary:
// exit 2, a message naming what is wrong (the nearest valid word for a typo), a hint saying what to write, and no
// job created; for submit and run alike.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const CASES: [string[], string][] = [
  [["--retries", "1", "--retry-on", "exitt"], 'bad retry class "exitt" (did you mean `exit`?)'],
  [["--retries", "1", "--retry-on", "lost,infrastructre"], "(did you mean `infrastructure`?)"],
  [["--retries", "1", "--retry-on", "Lost"], "(did you mean `lost`?)"],
  [["--retries", "1", "--retry-backoff", "2h"], "retry backoff of 7200s is longer than the most, 3600s (1h)"],
  [["--retries", "1", "--retry-backoff", "10x"], '--retry-backoff: bad duration "10x"'],
  [["--retries", "1", "--retry-backoff", "-5"], "a negative number? option values here are 0 or more"],
  [["--retries", "-1"], "a negative number? option values here are 0 or more"],
  [["--retries", "1.5"], "--retries: bad number 1.5"],
  [["--retry-backoff", "5s"], "without a number of retries"],
  [
    ["--after", "job_01ARZ3NDEKTSV4RRFFQ69G5FAV:okk"],
    'unknown condition "okk" (did you mean `ok`?), not one of ok, any, failed',
  ],
  [["--after", "job_01ARZ3NDEKTSV4RRFFQ69G5FAV:faild"], "(did you mean `failed`?)"],
  [["--after", "job_01ARZ3NDEKTSV4RRFFQ69G5FAV:zzz"], 'unknown condition "zzz", not one of ok, any, failed'],
  [["--array", "0-3%x"], 'bad array throttle %x in "0-3%x"'],
  // values that only look like numbers are read as typed, never as the number they resemble
  [["--array", ""], "empty array specification"],
  [["--array", "0x3"], 'bad array index "0x3" in "0x3"'],
  [["--retries", ""], '--retries: bad number ""'],
  [["--retries", "0x2"], '--retries: bad number "0x2"'],
  [["--retries", "1", "--retry-on", ""], 'bad retry class ""'],
];

describe("values as typed", () => {
  test("a name or index that looks like a number is kept as written", () => {
    const r = sb.run(["submit", "--json", "--name", "007", "--array", "01,2", "--", "true"]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ name: "007", array: "01,2", tasks: 2 });
    expect(sb.run(["wait", r.json.job_id]).code).toBe(0);
  });
});

describe("issue 17 options: bad input", () => {
  for (const command of ["submit", "run"]) {
    test(`${command}: each is refused with exit 2, what is wrong and what to write; nothing is created`, () => {
      const before = sb.jobCount();
      for (const [flags, says] of CASES) {
        const r = sb.run([command, "--json", ...flags, "--", "true"]);
        expect({ flags, code: r.code }).toEqual({ flags, code: 2 });
        const human = sb.run([command, ...flags, "--", "true"]);
        expect({ flags, stderr: human.stderr.includes(says) }).toEqual({ flags, stderr: true });
        expect(human.stderr).toMatch(/\nhint: \S/);
      }
      expect(sb.jobCount()).toBe(before);
    });
  }
});
