// Job arrays end to end through the compiled binary on this machine: the throttle sampled while the array runs,
// per-task results and failed indices, task addresses, cancel, idempotent resubmission, the completion feed, bad input.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";
import { sampleQueue } from "./queue-sampler.ts";

const sandboxes: Sandbox[] = [];
function sandbox(): Sandbox {
  const sb = new Sandbox();
  sandboxes.push(sb);
  return sb;
}
afterAll(() => {
  for (const sb of sandboxes) {
    const active = sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
    for (const j of active) sb.run(["cancel", "--grace-period", "0", j.job_id]);
    sb.cleanup();
  }
});

interface Task {
  index: number;
  job_id: string;
  state: string;
  exit_code: number | null;
}

function tasksOf(sb: Sandbox, id: string): Task[] {
  const r = sb.run(["inspect", "--json", id]);
  if (r.code !== 0) throw new Error(`inspect failed: ${r.stderr}`);
  return r.json.task_list as Task[];
}

function submitArray(sb: Sandbox, array: string, argv: string[], flags: string[] = []): string {
  const r = sb.run(["submit", "--json", "--array", array, ...flags, "--", ...argv]);
  if (r.code !== 0) throw new Error(`submit --array failed (${r.code}): ${r.stderr}${r.stdout}`);
  return r.json.job_id as string;
}

describe("an array's throttle", () => {
  const sb = sandbox();

  test("never more than %N tasks run at once, sampled continuously while it runs; each sees its index", async () => {
    const markers = join(sb.root, "markers");
    mkdirSync(markers);
    // Each task holds a marker while it runs and prints how many markers it saw (itself included); it ends once the
    // gate exists, which opens when a sample saw 3 running and the other 9 waiting in line.
    const gate = join(sb.root, "throttle-gate");
    const script =
      'mkdir "$M/$AWAITLESS_ARRAY_INDEX"; echo "index=$AWAITLESS_ARRAY_INDEX seen=$(ls "$M" | wc -l)"; while [ ! -e "$G" ]; do sleep 0.05; done; rmdir "$M/$AWAITLESS_ARRAY_INDEX"';
    const id = submitArray(
      sb,
      "0-11%3",
      ["sh", "-c", script],
      ["--env", `M=${markers}`, "--env", `G=${gate}`],
    );
    const tasks = tasksOf(sb, id);
    expect(tasks.map((t) => t.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const ids = tasks.map((t) => t.job_id);
    const sample = await sampleQueue(
      sb.dataDir,
      () => ids,
      async () => {
        const s = (await sb.runAsync(["status", "--json", id])).json;
        return s.state === "succeeded" || s.state === "failed";
      },
      { gate: { path: gate, limit: 3 } },
    );
    // the throttle is not a serialisation: 3 ran at once, and never more, from the first sample to the end
    expect(sample.sawFull).toBe(true);
    expect(sample.maxRunningCommands).toBe(3);
    expect(sample.fifoViolations).toEqual([]);
    const w = sb.run(["wait", "--json", id]);
    expect(w.code).toBe(0);
    expect(w.json).toMatchObject({ job_id: id, state: "succeeded", tasks: 12, counts: { succeeded: 12 } });
    expect(w.json.failed_indices).toEqual([]);
    for (const t of tasks) {
      const out = sb.run(["logs", "--stream", "stdout", `${id}.${t.index}`]).stdout;
      const m = /index=(\d+) seen=\s*(\d+)/.exec(out);
      expect(Number(m?.[1])).toBe(t.index);
      expect(Number(m?.[2])).toBeLessThanOrEqual(3);
    }
    expect(readdirSync(markers)).toEqual([]);
  }, 120_000);
});

describe("per-task results", () => {
  const sb = sandbox();
  let id = "";

  test("wait on the array counts tasks by state and lists the failed indices, flat", () => {
    id = submitArray(sb, "1,3,5,7-9", [
      "sh",
      "-c",
      'echo "task $AWAITLESS_ARRAY_INDEX"; case $AWAITLESS_ARRAY_INDEX in 5|8) exit 7;; esac',
    ]);
    const w = sb.run(["wait", "--json", "--timeout", "60s", id]);
    expect(w.code).toBe(3);
    expect(w.json).toMatchObject({
      job_id: id,
      array: "1,3,5,7-9",
      throttle: 6,
      state: "failed",
      job_state: "failed",
      wait_state: "complete",
      delivery_state: "delivered",
      tasks: 6,
      counts: { succeeded: 4, failed: 2 },
      failed_indices: [5, 8],
    });
    const human = sb.run(["wait", id]);
    expect(human.stdout).toContain("failed indices 5,8");
  });

  test("each task has its own state, exit code, tails and environment, addressed as ARRAY_ID.INDEX", () => {
    const five = sb.run(["wait", "--json", `${id}.5`]);
    expect(five.code).toBe(3);
    expect(five.json).toMatchObject({ state: "failed", exit_code: 7, stdout_tail: "task 5\n" });
    const three = sb.run(["status", "--json", `${id}.3`]);
    expect(three.json).toMatchObject({ state: "succeeded", exit_code: 0, array_task: `${id}.3` });
    expect(sb.run(["logs", `${id}.9`]).stdout).toContain("task 9");
    expect(sb.run(["status", `${id}.3`]).stdout).toMatch(new RegExp(`array task\\s+${id}\\.3`));
    const taskJob = three.json.job_id as string;
    expect(taskJob).not.toBe(id);
    expect(sb.run(["status", "--json", taskJob]).json.array_task).toBe(`${id}.3`);
    // the array's command reads as a task's does: quoted as it would be typed, not its words joined
    const command = (out: string) => /^command\s+(.*)$/m.exec(out)?.[1];
    expect(command(sb.run(["status", id]).stdout)).toBe(command(sb.run(["status", taskJob]).stdout));
  });

  test("a missing index, and logs of the whole array, are refused with what to do", () => {
    const missing = sb.run(["status", `${id}.4`]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("has no task 4");
    const bracket = sb.run(["status", `${id}[3]`]);
    expect(bracket.code).toBe(2);
    expect(bracket.stderr).toContain(`${id}.3`);
    const logs = sb.run(["logs", id]);
    expect(logs.code).toBe(2);
    expect(logs.stderr).toContain(`${id}.INDEX`);
  });

  test("the completion feed of the array delivers its tasks", () => {
    const r = sb.run(["completions", "--json", "--limit", "50", id]);
    expect(r.code).toBe(3);
    const delivered = (r.json.completions as { job_id: string; state: string }[]).map((c) => c.job_id).sort();
    expect(delivered).toEqual(
      tasksOf(sb, id)
        .map((t) => t.job_id)
        .sort(),
    );
  });
});

describe("cancel", () => {
  const sb = sandbox();

  test("cancelling the array cancels every task not ended; waiting tasks never start", async () => {
    const id = submitArray(sb, "0-5%2", ["sleep", "60"]);
    const tasks = tasksOf(sb, id);
    await until(
      "two tasks running",
      () => tasksOf(sb, id).filter((t) => t.state === "running").length === 2,
      30_000,
    );
    const r = sb.run(["cancel", "--json", "--grace-period", "1s", id]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      job_id: id,
      job_state: "cancelled",
      cancel_requested: 6,
      already_terminal: 0,
    });
    expect(r.json.array.counts).toEqual({ cancelled: 6 });
    const after = tasksOf(sb, id);
    expect(after.every((t) => t.state === "cancelled")).toBe(true);
    const started = tasks.filter((t) => existsSync(join(sb.dataDir, "jobs", t.job_id, "started")));
    expect(started.length).toBe(2);
    expect(sb.run(["cancel", "--json", id]).json).toMatchObject({ cancel_requested: 0, already_terminal: 6 });
  }, 60_000);

  test("one task can be cancelled alone", async () => {
    const id = submitArray(sb, "0-1", ["sleep", "60"]);
    await until("both tasks running", () => tasksOf(sb, id).every((t) => t.state === "running"), 30_000);
    expect(sb.run(["cancel", "--grace-period", "0", `${id}.1`]).code).toBe(0);
    expect(sb.status(`${id}.1`).state).toBe("cancelled");
    expect(sb.status(`${id}.0`).state).toBe("running");
    sb.run(["cancel", "--grace-period", "0", id]);
  }, 60_000);
});

describe("idempotency and bad input", () => {
  const sb = sandbox();

  test("the same client_request_id replays the array: no task launched twice", () => {
    const first = sb.run([
      "submit",
      "--json",
      "--array",
      "0-3",
      "--client-request-id",
      "sweep-1",
      "--",
      "true",
    ]);
    const again = sb.run([
      "submit",
      "--json",
      "--array",
      "0-3",
      "--client-request-id",
      "sweep-1",
      "--",
      "true",
    ]);
    expect(first.json.idempotent_replay).toBe(false);
    expect(again.json).toMatchObject({ job_id: first.json.job_id, idempotent_replay: true });
    expect(sb.jobCount()).toBe(4);
    const other = sb.run(["submit", "--array", "0-4", "--client-request-id", "sweep-1", "--", "true"]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain("already used for array");
  });

  test.each([
    ["5-1", "ends before it starts"],
    ["0-20:0", "step 0"],
    ["0-9%0", "bad array throttle %0"],
    ["0-99999", "more than 10000 tasks"],
    ["a-b", "bad array index"],
    ["1,,2", "bad array element"],
    ["0-3%2%1", "more than one %"],
  ])("--array %p is refused (%s), and nothing is created", (spec, words) => {
    const before = sb.jobCount();
    const r = sb.run(["submit", "--array", spec, "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(words);
    expect(sb.jobCount()).toBe(before);
  });

  test("an array whose --after a task would refuse is refused before the array exists (other target, unknown job)", () => {
    const arrays = () => {
      const db = new Database(join(sb.dataDir, "store.db"), { readonly: true });
      try {
        return (db.query("SELECT count(*) AS n FROM job_arrays").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    sb.writeConfig('[hosts.far]\nhostname = "127.0.0.1"\nport = 1\n');
    const parent = sb.submit(["true"]);
    const before = { arrays: arrays(), jobs: sb.jobCount() };
    const cross = sb.run(["submit", "--host", "far", "--array", "0-3", "--after", parent, "--", "true"]);
    sb.writeConfig("");
    expect(cross.code).toBe(2);
    expect(cross.stderr).toContain("same target");
    const unknown = sb.run([
      "submit",
      "--array",
      "0-3",
      "--after",
      "job_01JD000000000000000000000Z",
      "--",
      "true",
    ]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("to depend on");
    expect({ arrays: arrays(), jobs: sb.jobCount() }).toEqual(before);
  });

  test("an array with --queue is refused: its %N is its queue", () => {
    sb.run(["queue", "create", "q1", "--concurrency", "1"]);
    const r = sb.run(["submit", "--array", "0-3", "--queue", "q1", "--", "true"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("its tasks run in the array's own queue");
  });
});

describe("gc and the completion feed's bound", () => {
  const sb = sandbox();

  test("tasks gc removed are listed as removed; an array with none left is lost, not waited on forever", () => {
    const id = submitArray(sb, "0-2", ["true"]);
    expect(sb.run(["wait", id]).code).toBe(0);
    expect(sb.run(["gc", "--older-than", "0s"]).code).toBe(0);
    const w = sb.run(["wait", "--json", "--timeout", "5s", id]);
    expect(w.json).toMatchObject({ state: "lost", wait_state: "complete", removed_indices: [0, 1, 2] });
    expect(w.code).toBe(6);
  });

  test("an array of more tasks than the feed takes is refused there, pointing at wait", () => {
    const id = submitArray(sb, "0-500", ["true"]);
    const r = sb.run(["completions", id]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("at most 500 job IDs");
    expect(r.stderr).toContain("wait on the array");
    expect(sb.run(["wait", "--json", id]).json.counts).toEqual({ succeeded: 501 });
  }, 120_000);
});

describe("what an array keeps", () => {
  const sb = sandbox();

  test("its directory is part of the request, as for a job; secrets stay out of the store", () => {
    const other = join(sb.root, "elsewhere");
    mkdirSync(other);
    const args = [
      "submit",
      "--json",
      "--array",
      "0-1",
      "--client-request-id",
      "k-1",
      "--secret-env",
      "TOKEN",
    ];
    const cmd = ["--", "sh", "-c", 'pwd; [ -n "$TOKEN" ] && [ "$TOKEN" != "$NOT" ]'];
    const env = { TOKEN: "s3cr3t-value" };
    const first = sb.run([...args, ...cmd], { env });
    const same = sb.run([...args, ...cmd], { env });
    expect(same.json).toMatchObject({ job_id: first.json.job_id, idempotent_replay: true });
    const elsewhere = sb.run([...args, ...cmd], { cwd: other, env });
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.json.error.code).toBe("idempotency_conflict");
    const w = sb.run(["wait", "--json", first.json.job_id]);
    expect(w.json.counts).toEqual({ succeeded: 2 });
    expect(sb.run(["logs", "--stream", "stdout", `${first.json.job_id}.1`]).stdout).toContain(sb.work);
    const db = Bun.spawnSync(["grep", "-c", "s3cr3t-value", join(sb.dataDir, "store.db")]).stdout.toString();
    expect(db.trim()).toBe("0");
  });
});
