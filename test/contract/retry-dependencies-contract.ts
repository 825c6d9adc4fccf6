// `--after` on a parent that has retries, through the compiled binary: the child waits for the parent's final attempt
// (never an earlier attempt's end), on every target that holds children in their wrapper (local, SSH). Run by
// local-/ssh-retry-dependencies.contract.test.ts against a Target (contract.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, until } from "../helpers/cli.ts";
import { startedRecord, submitTo, type Target } from "./contract.ts";

let seq = 0;
/** A counter file in the jobs' working directory (shared by the parent's attempts and read by its children). */
const counter = () => `.awl-rdep-${process.pid}-${Date.now() % 1_000_000}-${++seq}`;

/** Counts this attempt in `file`, then (gated) waits for `gate` in the first attempt's directory, then runs `then`. */
function attemptScript(file: string, then: string, gated = false): string {
  const count = `n=$(cat ${file} 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > ${file}; echo "try $n"`;
  const gate = gated
    ? `r=$AWAITLESS_JOB_DIR; case $r in */attempts/*) r=\${r%/attempts/*} ;; esac; i=0; while [ ! -e "$r/gate" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; `
    : "";
  return `${count}; ${gate}${then}`;
}

export function retryDependenciesContract(
  name: string,
  setup: () => Promise<Target>,
  available: boolean,
): void {
  describe.skipIf(!available)(`dependencies on a parent with retries: ${name}`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await setup();
    });
    afterAll(async () => {
      const active = t?.sb.run(["list", "--json", "--state", "active", "--limit", "10000"]).json?.jobs ?? [];
      for (const j of active) t.sb.run(["cancel", "--grace-period", "0", j.job_id]);
      await t?.close();
    });

    const wait = async (id: string) => {
      const r = await t.sb.runAsync(["wait", "--json", "--timeout", "120s", id]);
      expect(r.json?.wait_state).toBe("complete");
      return r.json;
    };
    /** A child that prints the parent's attempt counter when it runs. */
    const child = (c: string, after: string) =>
      submitTo(t, ["sh", "-c", `echo "saw $(cat ${c})"`], ["--after", after]);
    // Each look is a CLI status, over SSH a connection of its own: under the full suite's load a few of them took
    // the helper's default 15 s (a CI run, busybox user), so twice the target's own bound for a job.
    const held = (id: string, says: string) =>
      until(
        `${id} held (${says})`,
        () => {
          const s = t.sb.status(id);
          return s.state === "queued" && String(s.status_message).includes(says) && s;
        },
        t.jobMs * 2,
      );
    const neverRan = (r: Record<string, unknown>, after: string) => {
      expect([r.state, r.reason, r.exit_code, r.started_at]).toEqual([
        "cancelled",
        "dependency_failed",
        null,
        null,
      ]);
      expect((r.error as { detail: string }).detail).toBe(`after ${after}`);
    };

    test("a parent failing twice, then succeeding: :ok runs once after the success, :failed never runs, :any after the end", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, 'sleep 1; [ "$n" -ge 3 ]')],
        ["--retries", "2", "--retry-on", "exit", "--retry-backoff", "0.5s"],
      );
      const ok = child(c, p);
      const failed = child(c, `${p}:failed`);
      const any = child(c, `${p}:any`);
      await held(ok, `waiting for ${p} to succeed`);
      // Waiting on the child alone drives the parent's retries (no daemon: the child's reader looks at its parent).
      const r = await wait(ok);
      expect([r.state, r.stdout_tail]).toEqual(["succeeded", "saw 3\n"]);
      expect(r.attempt).toBeUndefined();
      const parent = await wait(p);
      expect([parent.state, parent.attempt, parent.attempts]).toEqual(["succeeded", 3, 3]);
      expect(Date.parse(r.started_at)).toBeGreaterThanOrEqual(Date.parse(parent.finished_at) - 1000);
      neverRan(await wait(failed), `${p}:failed`);
      expect((await wait(any)).stdout_tail).toBe("saw 3\n");
    }, 120_000);

    test("a parent exhausting its retries: :ok never runs, :failed runs after the last attempt", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, "exit 4", true)],
        ["--retries", "1", "--retry-on", "exit", "--retry-backoff", "0.5s"],
      );
      const ok = child(c, p);
      const failed = child(c, `${p}:failed`);
      // the parent's attempts wait for the gate: the child is seen held however slowly the submits go
      await held(failed, `waiting for ${p} to fail`);
      writeFileSync(join(t.jobDir(p), "gate"), "");
      const f = await wait(failed);
      expect([f.state, f.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
      neverRan(await wait(ok), `${p}:ok`);
      const parent = await wait(p);
      expect([parent.state, parent.exit_code, parent.attempt]).toEqual(["failed", 4, 2]);
    }, 120_000);

    test("a parent whose wrapper is killed (lost, retried): the child waits for the retry, then runs", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, '[ "$n" -ge 2 ] || sleep 300')],
        ["--retries", "1", "--retry-backoff", "0"],
      );
      const ok = child(c, p);
      const failed = child(c, `${p}:failed`);
      await held(ok, "to succeed");
      const rec = await startedRecord(t, p);
      const wrapperPid = Number(rec.wrapper_pid);
      killQuietly(wrapperPid);
      await until("the parent's wrapper to die", () => !pidAlive(wrapperPid));
      const r = await wait(ok);
      // Without the final record the child would read the dead wrapper as the parent's (failed) end.
      expect([r.state, r.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
      const parent = await wait(p);
      expect([parent.state, parent.attempt]).toEqual(["succeeded", 2]);
      const hist = t.sb.run(["inspect", "--json", p]).json.attempt_history;
      expect(hist.map((a: { state: string; reason: string }) => [a.state, a.reason])).toEqual([
        ["lost", "wrapper_killed"],
      ]);
      neverRan(await wait(failed), `${p}:failed`);
    }, 120_000);

    test("no client: a retried parent's succeeding attempt starts its held child with every client gone", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, "true", true)],
        ["--retries", "2", "--retry-on", "exit"],
      );
      const ok = child(c, p);
      await held(ok, "to succeed");
      const pDir = t.jobDir(p);
      const cDir = t.jobDir(ok);
      const waiter = t.sb.spawn(["wait", ok]);
      killQuietly(waiter.pid);
      await waiter.exited;
      writeFileSync(join(pDir, "gate"), "");
      // The parent's wrapper knows a success is final: its `final` record wakes the child, no awaitless running.
      await until("the child's command to start", () => existsSync(join(cDir, "started")), 30_000);
      expect(readFileSync(join(pDir, "final"), "utf8")).toContain("outcome=ok");
      expect((await wait(ok)).stdout_tail).toBe("saw 1\n");
    }, 120_000);

    test("clients killed while held across a retry: the next client makes the retry and the child resolves", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, '[ "$n" -ge 2 ]', true)],
        ["--retries", "1", "--retry-on", "exit", "--retry-backoff", "0"],
      );
      const ok = child(c, p);
      const failed = child(c, `${p}:failed`);
      await held(failed, "to fail");
      const pDir = t.jobDir(p);
      const waiters = [t.sb.spawn(["wait", ok]), t.sb.spawn(["wait", failed])];
      for (const w of waiters) killQuietly(w.pid);
      await Promise.all(waiters.map((w) => w.exited));
      writeFileSync(join(pDir, "gate"), "");
      // Attempt 1 fails with a retry left: the wrapper writes no final record, so nothing is decided on the host.
      await until("attempt 1's exit record", () => existsSync(join(pDir, "exit")), 30_000);
      expect(existsSync(join(pDir, "final"))).toBe(false);
      // A new client: its wait on the child looks at the parent, makes attempt 2, and the children resolve.
      const r = await wait(ok);
      expect([r.state, r.stdout_tail]).toEqual(["succeeded", "saw 2\n"]);
      neverRan(await wait(failed), `${p}:failed`);
      expect((await wait(p)).attempt).toBe(2);
    }, 120_000);

    test("a parent cancelled while it waits for its next attempt: :ok never runs, :any runs", async () => {
      const c = counter();
      const p = submitTo(
        t,
        ["sh", "-c", attemptScript(c, "exit 1")],
        ["--retries", "2", "--retry-on", "exit", "--retry-backoff", "1h"],
      );
      const ok = child(c, p);
      const any = child(c, `${p}:any`);
      await until(`${p} waiting for attempt 2`, () => t.sb.status(p).attempt === 2 && t.sb.status(p));
      expect(t.sb.status(any).state).toBe("queued");
      expect((await t.sb.runAsync(["cancel", p])).code).toBe(0);
      neverRan(await wait(ok), `${p}:ok`);
      expect((await wait(any)).stdout_tail).toBe("saw 1\n");
    }, 120_000);
  });
}
