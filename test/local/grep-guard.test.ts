// `awaitless logs --grep` refuses a pattern whose backtracking can take exponential time, before reading,
// with exit 2 and the fix; ordinary patterns still filter (compiled binary, real job).
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("logs --grep", () => {
  const job = sb.submit(["sh", "-c", `echo ${"a".repeat(30)}!; echo done`]);
  sb.run(["wait", job]);

  test("^(a+)+$ is refused at once", () => {
    const r = sb.run(["logs", "--grep", "^(a+)+$", job]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the group (a+) is repeated and itself repeats");
    expect(r.stderr).toContain("Rewrite it");
    expect(r.stdout).toBe("");
  });

  test("--follow does not take --grep at all (refused before anything is read)", () => {
    const r = sb.run(["logs", "--follow", "--grep", "^(a+)+$", job]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("does not combine with --grep");
    expect(r.stdout).toBe("");
  });

  test("an ordinary pattern filters the log", () => {
    const r = sb.run(["logs", "--stream", "stdout", "--grep", "^a+!$", job]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`1:${"a".repeat(30)}!\n`);
  });
});
