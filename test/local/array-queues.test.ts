// An array's private queue (`array.<ARRAY_ID>`) through the binary: `queue list` leaves it out and counts it (`--all`
// shows it), queue commands and other jobs are refused on it, and its row is gone once the array ended, removed by
// whichever reader looks next (no client was waiting when the tasks ended).
import { Database } from "bun:sqlite";
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

/** Queue rows of arrays in the store, read directly (what `queue list` would never show once removed). */
function arrayQueueRows(): string[] {
  const db = new Database(join(sb.dataDir, "store.db"), { readonly: true });
  try {
    const rows = db.query("SELECT name FROM queues WHERE name LIKE 'array.%' ORDER BY name").all();
    return (rows as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

// each task waits for a go file, so the array stays active until the test lets it end
const held = (go: string) => ["sh", "-c", `while [ ! -e '${go}' ]; do sleep 0.05; done`];

describe("an array's private queue", () => {
  const go = join(sb.root, "go");
  let arrayId = "";

  test("queue list leaves it out and says how many arrays are active; --all lists it, marked", () => {
    expect(sb.run(["queue", "create", "gpu", "--concurrency", "1"]).code).toBe(0);
    const sub = sb.run(["submit", "--json", "--array", "0-3%2", "--", ...held(go)]);
    expect(sub.code).toBe(0);
    arrayId = sub.json.job_id;
    const plain = sb.run(["queue", "list", "--json"]);
    expect(plain.code).toBe(0);
    expect(plain.json.queues.map((q: { name: string }) => q.name)).toEqual(["gpu"]);
    expect(plain.json.hidden_array_queues).toBe(1);
    const human = sb.run(["queue", "list"]).stdout;
    expect(human).not.toContain(`array.${arrayId}`);
    expect(human).toContain(
      "1 job array active, its private queue not shown (awaitless queue list --all shows it)",
    );
    const all = sb.run(["queue", "list", "--all", "--json"]).json;
    expect(all.hidden_array_queues).toBe(0);
    const q = all.queues.find((x: { name: string }) => x.name === `array.${arrayId}`);
    expect(q).toMatchObject({ array_id: arrayId, concurrency: 2, running: 2, queued: 2 });
    expect(sb.run(["queue", "list", "--all"]).stdout).toContain(`array.${arrayId}`);
  }, 60_000);

  test("queue create of its name, a job submitted into it, and queue list of it are refused, nothing changed", () => {
    const before = sb.jobCount();
    const create = sb.run(["queue", "create", `array.${arrayId}`, "--concurrency", "4"]);
    expect(create.code).toBe(2);
    expect(create.stderr).toContain(`is the private queue of job array ${arrayId}`);
    expect(create.stderr).toContain(`awaitless status ${arrayId}`);
    const reserved = sb.run(["queue", "create", "array.mine", "--concurrency", "4"]);
    expect(reserved.code).toBe(2);
    expect(reserved.stderr).toContain('queue names starting with "array." are reserved');
    const foreign = sb.run(["submit", "--queue", `array.${arrayId}`, "--", "true"]);
    expect(foreign.code).toBe(2);
    expect(foreign.stderr).toContain("only its tasks run there");
    const named = sb.run(["queue", "list", `array.${arrayId}`]);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain(`awaitless status ${arrayId} shows its tasks`);
    expect(sb.jobCount()).toBe(before);
    const all = sb.run(["queue", "list", "--all", "--json"]).json;
    expect(all.queues.find((x: { name: string }) => x.name === `array.${arrayId}`)?.concurrency).toBe(2);
    expect(arrayQueueRows()).toEqual([`array.${arrayId}`]);
  }, 60_000);

  test("once the array ended with no client looking, the next reader removes its queue row", async () => {
    writeFileSync(go, "");
    // the tasks end on their own; their files say so before any client reconciles them
    const tasks = sb.run(["inspect", "--json", arrayId]).json.task_list as { job_id: string }[];
    await until(
      "every task's exit record",
      () => tasks.every((t) => Bun.file(join(sb.dataDir, "jobs", t.job_id, "exit")).size > 0),
      60_000,
    );
    expect(arrayQueueRows()).toEqual([`array.${arrayId}`]);
    const listing = sb.run(["queue", "list", "--all", "--json"]).json;
    expect(listing.queues.map((q: { name: string }) => q.name)).toEqual(["gpu"]);
    expect(listing.hidden_array_queues).toBe(0);
    expect(arrayQueueRows()).toEqual([]);
    expect(sb.run(["queue", "list"]).stdout).not.toContain("job array");
    const w = sb.run(["wait", "--json", arrayId]);
    expect(w.json).toMatchObject({ state: "succeeded", counts: { succeeded: 4 } });
  }, 90_000);

  test("wait on an ended array removes its queue; replaying its submit launches nothing and leaves none", () => {
    const submit = ["submit", "--json", "--client-request-id", "sweep-1", "--array", "0-2%1", "--", "true"];
    const sub = sb.run(submit);
    expect(sub.code).toBe(0);
    const id = sub.json.job_id;
    expect(sb.run(["wait", id]).code).toBe(0);
    expect(arrayQueueRows()).toEqual([]);
    const again = sb.run(submit);
    expect(again.json).toMatchObject({ job_id: id, idempotent_replay: true });
    expect(arrayQueueRows()).toEqual([]);
  }, 60_000);
});
