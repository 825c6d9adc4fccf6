// Through the compiled binary: the data directory's queues/ follows the trusted-directory rule, and an entry in it
// that names a live process which is not the job's wrapper (its true start time included) neither holds a queue
// nor gets a signal when a job leaves the line.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";
import { startTime, untouched } from "../helpers/proc-state.ts";

const sb = new Sandbox();
const spawned: number[] = [];
afterAll(() => {
  for (const p of spawned) killQuietly(-p);
  sb.cleanup();
});

const queues = join(sb.dataDir, "queues");

/** A live process that is nobody's wrapper, in its own group. */
function canary(): number {
  const p = Bun.spawn(["sleep", "300"], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
  spawned.push(p.pid);
  return p.pid;
}

/** waiting/TICKET.JOB_ID naming `pid` (with its true start time and this boot) as the entry's wrapper. */
function forgeWaiting(ticket: number, queue: string, pid: number): void {
  mkdirSync(join(queues, "waiting"), { recursive: true, mode: 0o700 });
  const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  writeFileSync(
    join(queues, "waiting", `${ticket}.job_01FORGEDFORGEDFORGEDFORGED${ticket}`),
    `ticket=${ticket}\nqueue=${queue}\nconcurrency=1\nresources=\nwrapper_pid=${pid}\nproc_start=${startTime(pid)}\nboot_id=${boot}\n`,
  );
}

describe("queues/ is not trusted blindly", () => {
  test("an entry naming a live process that is not its job's wrapper does not hold the queue", async () => {
    expect(sb.run(["queue", "create", "first", "--concurrency", "1"]).code).toBe(0);
    const c = canary();
    forgeWaiting(1, "first", c);
    const id = sb.submit(["sh", "-c", "echo ran"], ["--queue", "first"]);
    const w = sb.run(["wait", "--json", "--timeout", "20s", id]);
    expect(w.json).toMatchObject({ state: "succeeded", stdout_tail: "ran\n" });
    expect(untouched(c)).toBe(true);
  }, 60_000);

  test("cancelling a waiting job wakes no forged entry's process (USR1 would end it)", async () => {
    expect(sb.run(["queue", "create", "second", "--concurrency", "1"]).code).toBe(0);
    const blocker = sb.submit(
      ["sh", "-c", 'while [ ! -e "$AWAITLESS_JOB_DIR/go" ]; do sleep 0.1; done'],
      ["--queue", "second"],
    );
    await until("the blocker running", () => sb.status(blocker).state === "running");
    const waiting = sb.submit(["sh", "-c", "echo never"], ["--queue", "second"]);
    await until("the second job in line", () => sb.status(waiting).state === "queued");
    const c = canary();
    // right behind it in line: the wrapper that leaves the line wakes the next ones (by ticket)
    const ticket = Number(readFileSync(join(queues, "ticket"), "utf8").trim());
    forgeWaiting(ticket + 1, "second", c);
    const r = sb.run(["cancel", "--json", waiting]);
    expect(r.json.job_state).toBe("cancelled");
    // the cancelled job's wrapper has left the line (and woken whom it wakes) once its exit record is there
    expect(sb.run(["wait", "--json", waiting]).json.state).toBe("cancelled");
    expect(untouched(c)).toBe(true);
    writeFileSync(join(sb.run(["inspect", "--json", blocker]).json.job_dir, "go"), "");
    expect(sb.run(["wait", "--json", blocker]).json.state).toBe("succeeded");
    expect(pidAlive(c)).toBe(true);
  }, 60_000);

  test("a queues/ directory others may write to is refused, with the fix", () => {
    const other = new Sandbox();
    try {
      expect(other.run(["queue", "create", "q", "--concurrency", "1"]).code).toBe(0);
      mkdirSync(join(other.dataDir, "queues"), { recursive: true });
      chmodSync(join(other.dataDir, "queues"), 0o777);
      const r = other.run(["run", "--json", "--queue", "q", "--", "true"]);
      expect(r.code).not.toBe(0);
      const text = r.stdout + r.stderr;
      expect(text).toContain(`${join(other.dataDir, "queues")} is writable by other users`);
      expect(text).toContain("chmod go-w");
    } finally {
      other.cleanup();
    }
  }, 60_000);
});
