// Retries (--retries, --retry-on, --retry-backoff) through the compiled binary, one list of behaviours per backend:
// run by local-retries.contract.test.ts and ssh-retries.contract.test.ts against a Target (contract.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { groupMembers } from "../e2e/ssh-fixture.ts";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { startedRecord, submitTo, type Target, waitFor } from "./contract.ts";

/** A counter file in the job's working directory (shared by its attempts), unique to one test. */
function counter(tag: string): string {
  return `.awl-retry-${tag}-${process.pid}-${Date.now() % 1_000_000}`;
}

/** Increments the counter, prints "try N", then runs `then` with $n set. */
const counted = (file: string, then: string) =>
  `n=$(cat ${file} 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > ${file}; echo "try $n"; ${then}`;

export function retriesContract(name: string, setup: () => Promise<Target>, available: boolean): void {
  describe.skipIf(!available)(`retries: ${name}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await setup();
    });
    afterAll(async () => {
      await t?.close();
    });

    test("a killed wrapper is retried: the first copy is stopped, attempt 2 succeeds under the same job ID", async () => {
      const c = counter("killed");
      const id = submitTo(
        t,
        ["sh", "-c", counted(c, '[ "$n" -ge 2 ] || sleep 300')],
        ["--retries", "2", "--retry-backoff", "0"],
      );
      const rec = await startedRecord(t, id);
      const wrapperPid = Number(rec.wrapper_pid);
      const pgid = Number(rec.pgid);
      killQuietly(wrapperPid);
      await until("the wrapper to die", () => !pidAlive(wrapperPid));
      const r = await waitFor(t, id);
      // the answer first: on a failure it says how the job ended (state, reason, error) where the exit code cannot
      expect(r.json).toMatchObject({
        job_id: id,
        state: "succeeded",
        attempt: 2,
        attempts: 3,
        stdout_tail: "try 2\n",
      });
      expect(r.code).toBe(0);
      // the first attempt's command (sleep 300) was stopped before the second started: never two copies
      await until("the first attempt's group to be gone", () => groupMembers(pgid).length === 0, 15_000);
      const ins = t.sb.run(["inspect", "--json", id]).json;
      expect(
        ins.attempt_history.map((a: { attempt: number; state: string; reason: string }) => [
          a.attempt,
          a.state,
          a.reason,
        ]),
      ).toEqual([[1, "lost", "wrapper_killed"]]);
      expect(ins.attempt_history[0].result).toMatchObject({ state: "lost", attempt: 1, attempts: 3 });
      expect(ins.job).toMatchObject({ attempt: 2, attempts: 3 });
      // each attempt launched once: one reservation per retried attempt in the history
      const reserved = ins.history.filter(
        (h: { reason: string | null }) => h.reason === "attempt 2 launch reserved",
      );
      expect(reserved.length).toBe(1);
    }, 90_000);

    test("--retry-on exit retries a failing command until it succeeds on attempt 3, the backoff doubling", async () => {
      const c = counter("exit");
      const id = submitTo(
        t,
        ["sh", "-c", counted(c, '[ "$n" -ge 3 ]')],
        ["--retries", "4", "--retry-on", "exit", "--retry-backoff", "1s"],
      );
      const r = await waitFor(t, id);
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject({
        state: "succeeded",
        exit_code: 0,
        attempt: 3,
        attempts: 5,
        stdout_tail: "try 3\n",
      });
      const ins = t.sb.run(["inspect", "--json", id]).json;
      const h = ins.attempt_history as {
        attempt: number;
        state: string;
        exit_code: number;
        launched_at: string;
        finished_at: string;
        result: { stdout_tail: string };
      }[];
      expect(h.map((a) => [a.attempt, a.state, a.exit_code, a.result.stdout_tail])).toEqual([
        [1, "failed", 1, "try 1\n"],
        [2, "failed", 1, "try 2\n"],
      ]);
      // the gaps the store recorded: attempt 2 launched ≥ 1 s after attempt 1 ended, attempt 3 ≥ 2 s after attempt 2
      const launches = ins.history.filter((e: { reason: string | null }) =>
        /^attempt \d launch reserved$/.test(e.reason ?? ""),
      );
      expect(launches.length).toBe(2);
      const ms = (s: string) => Date.parse(s);
      expect(ms(launches[0].at) - ms(h[0]!.finished_at)).toBeGreaterThanOrEqual(1000);
      expect(ms(launches[1].at) - ms(h[1]!.finished_at)).toBeGreaterThanOrEqual(2000);
      expect(ms(h[1]!.launched_at)).toBe(ms(launches[0].at));
    }, 90_000);

    test("a client that dies after reserving an attempt's launch: the next ones launch it exactly once", async () => {
      const c = counter("crash");
      const id = submitTo(
        t,
        ["sh", "-c", counted(c, '[ "$n" -ge 2 ]')],
        ["--retries", "1", "--retry-on", "exit", "--retry-backoff", "1s"],
      );
      // a reader that claims attempt 2's launch once its backoff has passed, then dies before launching (exit 99)
      const crash = { AWAITLESS_TEST_CRASH_AFTER_RESERVE: "1" };
      await until(
        "a reader to die holding attempt 2's launch",
        async () => {
          const r = await t.sb.runAsync(["status", "--json", id], { env: crash });
          return r.code === 99;
        },
        t.jobMs,
      );
      // two readers at once: exactly one takes the abandoned launch over
      const [a, b] = await Promise.all([waitFor(t, id), waitFor(t, id)]);
      for (const r of [a, b])
        expect(r.json).toMatchObject({ state: "succeeded", attempt: 2, stdout_tail: "try 2\n" });
      const reasons = t.sb
        .run(["inspect", "--json", id])
        .json.history.map((e: { reason: string | null }) => e.reason);
      expect(reasons.filter((r: string | null) => r === "attempt 2 launch reserved").length).toBe(1);
      expect(reasons.filter((r: string | null) => r === "launch_resumed").length).toBe(1);
      expect(reasons.indexOf("attempt 2 launch reserved")).toBeLessThan(reasons.indexOf("launch_resumed"));
    }, 90_000);

    test("a cancel is never retried, neither of a running attempt nor of one waiting for its backoff", async () => {
      const running = submitTo(t, ["sh", "-c", "sleep 300"], ["--retries", "3", "--retry-on", "lost,exit"]);
      await until("the job running", () => t.sb.status(running).state === "running", t.jobMs);
      const a = t.sb.run(["cancel", "--json", running]);
      expect(a.json.job_state).toBe("cancelled");
      const ra = await waitFor(t, running);
      expect(ra.json).toMatchObject({ state: "cancelled", attempt: 1, attempts: 4 });
      expect(t.sb.run(["inspect", "--json", running]).json.attempt_history).toEqual([]);

      const c = counter("cancel");
      const held = submitTo(
        t,
        ["sh", "-c", counted(c, "exit 1")],
        ["--retries", "3", "--retry-on", "exit", "--retry-backoff", "1h"],
      );
      // a wait that times out (client_timeout) is no end of the job: it stays waiting for attempt 2
      const w = await t.sb.runAsync(["wait", "--json", "--timeout", "3s", held]);
      expect(w.json).toMatchObject({ wait_state: "client_timeout", job_state: "queued" });
      // what it waits for is said: the next attempt, when, and how the one before ended
      const waiting = "waiting for attempt 2 of 4 in about 60 min; attempt 1 failed with exit code 1";
      expect(w.json.status_message).toBe(waiting);
      expect(w.json.next_action).toContain(`The job is still queued, ${waiting}: only this wait ended`);
      const st = t.sb.status(held);
      expect(st).toMatchObject({ state: "queued", attempt: 2, attempts: 4, status_message: waiting });
      expect(Date.parse(st.next_attempt_at) - Date.now()).toBeGreaterThan(3_000_000);
      const human = t.sb.run(["status", held]).stdout;
      expect(human).toContain(`queued (${waiting})`);
      const timedOut = await t.sb.runAsync(["wait", "--timeout", "1s", held]);
      expect(timedOut.code).toBe(4);
      expect(timedOut.stdout + timedOut.stderr).toContain(`is still queued (${waiting})`);
      const b = t.sb.run(["cancel", "--json", held]);
      expect(b.json.job_state).toBe("cancelled");
      const rb = await waitFor(t, held);
      expect(rb.json).toMatchObject({ state: "cancelled", attempt: 2, exit_code: null });
      expect(rb.json.error.detail).toBe("cancelled before attempt 2 was launched");
      const ins = t.sb.run(["inspect", "--json", held]).json;
      expect(ins.attempt_history.map((x: { state: string }) => x.state)).toEqual(["failed"]);
      // attempt 2 never ran: its launch was never reserved, and it has no directory of its own
      expect(
        ins.history.some((e: { reason: string | null }) => e.reason === "attempt 2 launch reserved"),
      ).toBe(false);
      expect(ins.job_dir).toEndWith("/attempts/2");
      expect(existsSync(ins.job_dir)).toBe(false);
    }, 90_000);
  });
}
