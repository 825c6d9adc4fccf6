// Through the compiled binary: a cancelled or timed-out job's command gets exactly one SIGTERM (its cleanup runs to
// the end), a second `cancel` while the first waits sends none, and a command ignoring TERM is killed after the grace.
import { afterAll, describe, expect, test } from "bun:test";
import { Sandbox, until } from "../helpers/cli.ts";
import { cleanupIn, termCounter, termsIn } from "../helpers/term-counter.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const counter = (ignoreTerm = false) => termCounter('"$AWAITLESS_JOB_DIR"', { ignoreTerm });
const jobDir = (id: string): string => sb.run(["inspect", "--json", id]).json.job_dir;

async function submitReady(argv: string[]): Promise<{ id: string; dir: string }> {
  const id = sb.submit(argv);
  await until("the command's ready", () => sb.run(["logs", id]).stdout.includes("ready"));
  return { id, dir: jobDir(id) };
}

describe("one SIGTERM per cancel or timeout", () => {
  test("cancel: one TERM, the command's cleanup completes, and a second cancel meanwhile sends none", async () => {
    const { id, dir } = await submitReady(counter());
    const first = sb.spawn(["cancel", "--json", "--grace-period", "30s", id]);
    await until("the TERM", () => termsIn(dir) === 1);
    const second = sb.run(["cancel", "--json", "--grace-period", "30s", id]);
    const firstOut = JSON.parse(await new Response(first.stdout).text());
    expect(await first.exited).toBe(0);
    expect(firstOut.job_state).toBe("cancelled");
    expect(second.json.job_state).toBe("cancelled");
    expect(termsIn(dir)).toBe(1);
    expect(cleanupIn(dir)).toBe("cleaned up after 1 TERM\n");
    const w = sb.run(["wait", "--json", id]);
    expect(w.code).toBe(5);
    expect(w.json.exit_code).toBe(0);
  }, 60_000);

  test("timeout: one TERM and the cleanup completes", () => {
    const r = sb.run(["run", "--json", "--timeout", "1", "--", ...counter()]);
    expect(r.json.state).toBe("timed_out");
    const dir = jobDir(r.json.job_id);
    expect(termsIn(dir)).toBe(1);
    expect(cleanupIn(dir)).toBe("cleaned up after 1 TERM\n");
  }, 60_000);

  test("a command that ignores TERM gets one, then KILL after the grace period", async () => {
    const { id, dir } = await submitReady(counter(true));
    const c = sb.run(["cancel", "--json", "--grace-period", "1s", id]);
    expect(c.json.job_state).toBe("cancelled");
    expect(c.json.result.signal).toBe("KILL");
    expect(c.json.result.exit_code).toBe(137);
    expect(termsIn(dir)).toBe(1);
    expect(cleanupIn(dir)).toBeNull();
  }, 60_000);
});
