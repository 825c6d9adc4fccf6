// Retries on the real test cluster: a non-requeueable job whose node is set DOWN ends its attempt node_fail, and
// the next attempt is a new Slurm job of the same Awaitless job (Slurm's own requeue is not an attempt of ours).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Sandbox, until } from "../helpers/cli.ts";
import { faultRigUp, LOW, NODE2, resumeNode, sacctRuns, slurmSandbox } from "./slurm-faults-rig.ts";
import { run, slurmJobIdOf } from "./slurm-harness.ts";

const up = await faultRigUp("Slurm retries e2e");

describe.skipIf(!up)("retries on the test cluster", () => {
  const sandboxes: Sandbox[] = [];
  const slurmIds: string[] = [];
  afterAll(async () => {
    if (slurmIds.length > 0) await run(["scancel", ...slurmIds]);
    await resumeNode(NODE2);
    for (const s of sandboxes) s.cleanup();
  });

  test("a node set DOWN under a non-requeueable job: attempt 1 node_fail, attempt 2 a new Slurm job that succeeds", async () => {
    const s = slurmSandbox();
    sandboxes.push(s);
    const count = join(s.work, "count");
    const id = s.submit(
      [
        "sh",
        "-c",
        `n=$(cat '${count}' 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > '${count}'; echo "try $n"; [ "$n" -ge 2 ] || sleep 150`,
      ],
      [
        "--host",
        "localhost",
        "--slurm-option",
        `partition=${LOW}`,
        "--slurm-option",
        "time=5",
        "--retries",
        "1",
        "--retry-backoff",
        "0",
      ],
    );
    await until("the job running", () => s.status(id).state === "running", 45_000, 200);
    const first = await slurmJobIdOf(() => s.status(id));
    slurmIds.push(first);
    expect((await run(["scontrol", "update", `jobid=${first}`, "requeue=0"])).code).toBe(0);
    const down = await run([
      "scontrol",
      "update",
      `nodename=${NODE2}`,
      "state=down",
      "reason=awaitless-retry-test",
    ]);
    expect(down.code).toBe(0);
    // attempt 2 is a new Slurm job, pending until the node is back
    await until(
      "attempt 2 submitted",
      () => s.status(id).attempt === 2 && s.status(id).backend_id !== null,
      60_000,
      200,
    );
    const second = await slurmJobIdOf(() => s.status(id));
    slurmIds.push(second);
    expect(second).not.toBe(first);
    await resumeNode(NODE2);
    const w = await s.runAsync(["wait", "--json", "--timeout", "90s", id]);
    expect(w.json).toMatchObject({
      job_id: id,
      state: "succeeded",
      attempt: 2,
      attempts: 2,
      stdout_tail: "try 2\n",
    });
    const ins = s.run(["inspect", "--json", id]).json;
    expect(ins.attempt_history.map((a: { state: string; reason: string }) => [a.state, a.reason])).toEqual([
      ["failed", "node_fail"],
    ]);
    expect(ins.job_dir).toEndWith("/attempts/2");
    expect(await sacctRuns(first)).toEqual(["NODE_FAIL|0:0"]);
    expect(await sacctRuns(second)).toEqual(["COMPLETED|0:0"]);
    expect(readFileSync(count, "utf8").trim()).toBe("2");
  }, 180_000);
});
