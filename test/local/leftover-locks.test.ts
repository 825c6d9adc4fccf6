// Through the compiled binary: a `--resource` lock is released only when the job's whole process tree is gone.
// What a command left (even one ignoring TERM) is stopped before the next holder starts; what a --keep-leftovers
// job kept holds the lock until a cancel of the ended job stops it.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
sb.writeConfig("[defaults]\ngrace_period_seconds = 2\n");
const left: number[] = [];
afterAll(() => {
  for (const p of left) killQuietly(p);
  sb.cleanup();
});

const dirOf = (id: string): string => sb.run(["inspect", "--json", id]).json.job_dir;
const leftPid = (id: string) => Number(readFileSync(join(dirOf(id), "left"), "utf8").trim());

describe("resource locks and what a job left", () => {
  test("the next holder starts only once what the last one left (ignoring TERM) is gone", async () => {
    const first = sb.submit(
      ["sh", "-c", `sh -c 'trap "" TERM; exec sleep 300' & echo $! > "$AWAITLESS_JOB_DIR/left"; sleep 0.3`],
      ["--resource", "gpu=1"],
    );
    await until("the first job's leftover started", () => {
      try {
        return leftPid(first) > 0;
      } catch {
        return false;
      }
    });
    const pid = leftPid(first);
    left.push(pid);
    // the second holder records whether the first one's leftover was still alive (a zombie is dead) when it started
    const second = sb.submit(
      ["sh", "-c", `if grep -qv ') Z ' /proc/${pid}/stat 2>/dev/null; then echo alive; else echo gone; fi`],
      ["--resource", "gpu=1"],
    );
    expect(sb.run(["wait", "--json", first]).json.leftovers).toMatchObject({ count: 1, action: "stopped" });
    const w = sb.run(["wait", "--json", second]);
    expect(w.json).toMatchObject({ state: "succeeded", stdout_tail: "gone\n" });
    expect(pidAlive(pid)).toBe(false);
  }, 60_000);

  test("what a --keep-leftovers job kept holds its lock until a cancel of the ended job stops it", async () => {
    const kept = sb.submit(
      ["sh", "-c", 'setsid sleep 300 & echo $! > "$AWAITLESS_JOB_DIR/left"'],
      ["--resource", "gpu=0", "--keep-leftovers"],
    );
    expect(sb.run(["wait", "--json", kept]).json.leftovers).toMatchObject({ count: 1, action: "kept" });
    const pid = leftPid(kept);
    left.push(pid);
    const next = sb.submit(["sh", "-c", "echo ran"], ["--resource", "gpu=0"]);
    const held = sb.run(["wait", "--json", "--timeout", "4s", next]);
    expect(held.json.job_state).toBe("queued");
    expect(held.json.status_message).toContain("gpu=0");
    const c = sb.run(["cancel", "--json", "--grace-period", "1s", kept]);
    expect(c.json.leftover.action).toBe("signalled");
    await until("the kept process to be stopped", () => !pidAlive(pid), 15_000);
    expect(sb.run(["wait", "--json", "--timeout", "30s", next]).json).toMatchObject({
      state: "succeeded",
      stdout_tail: "ran\n",
    });
  }, 90_000);
});
