// Through the compiled binary: a running job's first output is seen at once, not at the wrapper's next size check
// (seconds away at the start): `status` says when it came, and the live line never says "no output yet" after it.
import { afterAll, expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
const ids: string[] = [];
afterAll(() => {
  for (const id of ids) sb.run(["cancel", "--grace-period", "0", id]);
  sb.cleanup();
});

test("the first output of a running job is in its status before the wrapper's next check", async () => {
  // the job writes only once the test opens the gate, long after the wrapper's first check (at its start)
  const id = sb.submit([
    "sh",
    "-c",
    'i=0; while [ ! -e "$AWAITLESS_JOB_DIR/gate" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo first-line; sleep 60',
  ]);
  ids.push(id);
  const dir: string = sb.run(["inspect", "--json", id]).json.job_dir;
  await until("the job to run", () => sb.status(id).state === "running");
  const before = sb.status(id);
  expect(before.last_output_at ?? null).toBeNull();
  writeFileSync(join(dir, "gate"), "");
  await until(
    "the command's output in its file",
    () => existsSync(join(dir, "stdout")) && statSync(join(dir, "stdout")).size > 0,
  );
  const after = sb.status(id);
  expect(after.state).toBe("running");
  expect(after.last_output_at, JSON.stringify(after)).toEqual(expect.any(String));
  const human = sb.run(["status", id]).stdout;
  expect(human).not.toContain("no output yet");
});
