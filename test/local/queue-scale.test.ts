// Queue admission's cost through the binary: a waiting wrapper's scan reads a bounded number of queue entries
// however long the line is (not every entry, which made W waiters cost W² reads), far-back waiters back off
// instead of polling, and the line still drains in order, woken by each task that ends, and a far-back cancel is
// prompt. The count comes from the wrapper's test-only scan log (AWAITLESS_TEST_QUEUE_SCANS).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Sandbox } from "../helpers/cli.ts";
import { until } from "../helpers/until.ts";

const W = 40;

interface Scan {
  pid: string;
  reads: number;
}

function scans(file: string): Scan[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const [pid, reads] = l.split(" ");
      return { pid: pid ?? "", reads: Number(reads) };
    });
}

describe("a long line of waiters", () => {
  const sb = new Sandbox();
  const scanLog = join(sb.root, "scans");
  const env = { AWAITLESS_TEST_QUEUE_SCANS: scanLog };
  afterAll(() => {
    const active = sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
    for (const j of active) sb.run(["cancel", "--grace-period", "0", j.job_id]);
    sb.cleanup();
  });
  const go = join(sb.root, "go");
  let id = "";

  test(`with ${W} waiters a scan reads a few entries, not all of them, and every waiter still looks again`, async () => {
    const sub = sb.run(
      [
        "submit",
        "--json",
        "--array",
        `0-${W}%1`,
        "--",
        "sh",
        "-c",
        `while [ ! -e '${go}' ]; do sleep 0.05; done`,
      ],
      { env },
    );
    expect(sub.code).toBe(0);
    id = sub.json.job_id;
    const waiting = join(sb.dataDir, "queues", "waiting");
    await until(
      "every task but the first in line",
      () => (readdirSync(waiting).length === W ? true : undefined),
      60_000,
    );
    // a window from here: until every waiter has scanned again (the far ones after their backoff)
    writeFileSync(scanLog, "");
    const seen = await until(
      "every waiting wrapper to scan again",
      () => {
        const s = scans(scanLog);
        return new Set(s.map((x) => x.pid)).size >= W ? s : undefined;
      },
      90_000,
    );
    const most = Math.max(...seen.map((x) => x.reads));
    // %1: the running slot, and at most 2 live waiters ahead decide (the old scan read all W+1 entries each time)
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThanOrEqual(1);
    // the last one read 3 entries, yet counts everyone ahead (the rest counted by name)
    const last = sb.run(["status", "--json", `${id}.${W}`]).json;
    expect(last.status_message).toContain(`queued behind ${W - 1} jobs`);
  }, 180_000);

  test("a far-back task cancelled while waiting ends promptly, and the line drains in order once the first ends", async () => {
    const last = `${id}.${W}`;
    const c = sb.run(["cancel", "--json", last]);
    expect(c.code).toBe(0);
    const ended = sb.run(["wait", "--json", "--timeout", "20s", last]);
    expect(ended.json).toMatchObject({ state: "cancelled", started_at: null });
    writeFileSync(go, "");
    const w = sb.run(["wait", "--json", "--timeout", "120s", id], { env });
    expect(w.json).toMatchObject({ job_id: id, tasks: W + 1, counts: { succeeded: W, cancelled: 1 } });
    const started = [];
    for (let i = 0; i < W; i++) {
      const s = sb.run(["status", "--json", `${id}.${i}`]).json;
      started.push(Date.parse(s.started_at));
    }
    // FIFO by ticket: tasks were launched in index order, so they started in index order
    expect([...started].sort((a, b) => a - b)).toEqual(started);
  }, 180_000);
});
