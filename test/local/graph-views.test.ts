// `list` and `status` show a job graph through the binary: a job held by --after names the parent it waits for, a
// retried job its attempt of how many, an array its progress (done of all, by state, the failed indices).
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => {
  const active = sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
  for (const j of active) sb.run(["cancel", "--grace-period", "0", j.job_id]);
  sb.cleanup();
});

describe("list and status of a job graph", () => {
  const go = join(sb.root, "go");
  const held = `while [ ! -e '${go}' ]; do sleep 0.05; done`;
  // tasks 0 and 1 end at once (1 failing), 2 and 3 hold: the array is half done
  const task = `[ "$AWAITLESS_ARRAY_INDEX" -lt 2 ] || { ${held}; }; [ "$AWAITLESS_ARRAY_INDEX" != 1 ]`;

  test("dependencies, attempts and array progress, human and JSON", async () => {
    const parent = sb.submit(["sh", "-c", held]);
    const child = sb.submit(["true"], ["--after", parent]);
    const retried = sb.submit(
      ["sh", "-c", "exit 3"],
      ["--retries", "1", "--retry-on", "exit", "--retry-backoff", "1h"],
    );
    const arr = sb.run(["submit", "--json", "--array", "0-3%2", "--", "sh", "-c", task]).json
      .job_id as string;
    await until(
      "two tasks done, two running, the retry waiting",
      () => {
        const l = sb.run(["list", "--json", "--limit", "100"]).json;
        const a = l.arrays?.[0];
        const r = l.jobs.find((j: { job_id: string }) => j.job_id === retried);
        return a?.done === 2 && a.counts.running === 2 && r?.attempt === 2;
      },
      30_000,
    );
    const json = sb.run(["list", "--json", "--limit", "100"]).json;
    const byId = new Map(json.jobs.map((j: { job_id: string }) => [j.job_id, j]));
    expect(byId.get(child)).toMatchObject({
      state: "queued",
      after: [`${parent}:ok`],
      status_message: `waiting for ${parent} to succeed`,
    });
    expect(byId.get(retried)).toMatchObject({ state: "queued", attempt: 2, attempts: 2 });
    expect(json.arrays).toEqual([
      {
        job_id: arr,
        array: "0-3%2",
        state: "running",
        tasks: 4,
        done: 2,
        counts: { succeeded: 1, failed: 1, running: 2 },
        failed_indices: [1],
      },
    ]);
    const human = sb.run(["list", "--limit", "100"]).stdout;
    const row = (id: string) => human.split("\n").find((l) => l.startsWith(id)) ?? "";
    expect(row(child)).toContain(`queued (after ${parent})`);
    expect(row(retried)).toContain("queued (attempt 2/2)");
    // the array is one row, as the dashboard shows it: no task rows, no private queue column
    expect(row(arr)).toMatch(/running \(2\/4 done, 1 failed\) .* \[array 0-3%2\] sh -c/);
    expect(human).not.toContain(`${arr}.`);
    expect(human).not.toContain(`array.${arr}`);
    // --tasks: each task by its address, the array's progress under the table
    const tasks = sb.run(["list", "--tasks", "--limit", "100"]).stdout;
    expect(tasks).toMatch(new RegExp(`^${arr}\\.1 +failed `, "m"));
    expect(tasks).not.toContain(`array.${arr}`);
    expect(tasks).toContain(
      `array ${arr} 0-3%2 running: 2/4 done (1 succeeded, 1 failed), 2 running; failed indices 1`,
    );

    const st = sb.run(["status", child]).stdout;
    expect(st).toContain(`queued (waiting for ${parent} to succeed)`);
    expect(st).toMatch(new RegExp(`after\\s+${parent}:ok`));
    expect(sb.run(["status", retried]).stdout).toMatch(/attempt\s+2 of 2/);
    const arrStatus = sb.run(["status", "--json", arr]).json;
    expect(arrStatus).toMatchObject({
      tasks: 4,
      counts: { succeeded: 1, failed: 1, running: 2 },
      failed_indices: [1],
    });

    writeFileSync(go, "");
    expect(sb.run(["wait", arr]).code).toBe(3);
    const ended = sb.run(["list", "--json", "--limit", "100"]).json.arrays[0];
    expect(ended).toMatchObject({ state: "failed", done: 4, counts: { succeeded: 3, failed: 1 } });
    // a listing with no task of an array has no arrays field
    expect(sb.run(["list", "--json", "--queue", "none"]).json).toEqual({ jobs: [] });
  }, 90_000);
});
