// Through the compiled binary: `logs --follow` ends with the job's final state line and exits with its status class.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, pidAlive, Sandbox, until } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const follow = (id: string, json = false) =>
  sb.runAsync(["logs", "--follow", ...(json ? ["--json"] : []), id]);

describe("logs --follow ends with the job", () => {
  test("succeeded: the log on stdout, the state line on stderr, exit 0", async () => {
    const id = sb.submit(["sh", "-c", "echo first; sleep 0.5; echo second"]);
    const r = await follow(id);
    expect(r.stdout).toBe("first\nsecond\n");
    expect(r.stderr).toMatch(new RegExp(`^${id} succeeded after \\S+ \\(exit 0\\)\\n$`));
    expect(r.code).toBe(0);
  });

  test("failed: exit 3 and the command's exit code on the state line", async () => {
    const id = sb.submit(["sh", "-c", "echo broken >&2; exit 9"]);
    const r = await follow(id);
    expect(r.stdout).toBe("broken\n");
    expect(r.stderr).toMatch(new RegExp(`^${id} failed after \\S+ \\(exit 9\\)\\n$`));
    expect(r.code).toBe(3);
  });

  test("timed_out: exit 3, as wait reports it", async () => {
    const id = sb.submit(["sh", "-c", "sleep 30; echo never"], ["--timeout", "1s"]);
    const r = await follow(id);
    expect(r.stderr).toContain(`${id} timed_out`);
    expect(r.code).toBe(3);
  });

  test("cancelled while followed: exit 5", async () => {
    const id = sb.submit(["sh", "-c", "echo started; sleep 30; echo never"]);
    const followed = follow(id);
    await until("the job running", () => sb.status(id).state === "running");
    expect(sb.run(["cancel", "--grace-period", "1s", id]).code).toBe(0);
    const r = await followed;
    expect(r.stdout).toBe("started\n");
    expect(r.stderr).toMatch(new RegExp(`^${id} cancelled after `));
    expect(r.code).toBe(5);
  });

  test("lost (its wrapper was killed): exit 6", async () => {
    const id = sb.submit(["sh", "-c", "sleep 30; echo never"]);
    const jobDir = sb.run(["inspect", "--json", id]).json.job_dir as string;
    const startedFile = await until("the started record", () => {
      try {
        return readFileSync(join(jobDir, "started"), "utf8");
      } catch {
        return "";
      }
    });
    const wrapperPid = Number(/wrapper_pid=(\d+)/.exec(startedFile)![1]);
    const pgid = Number(/^pgid=(\d+)$/m.exec(startedFile)![1]);
    try {
      const followed = follow(id);
      process.kill(wrapperPid, "SIGKILL");
      await until("wrapper gone", () => !pidAlive(wrapperPid));
      const r = await followed;
      expect(r.stderr).toContain(`${id} lost`);
      expect(r.code).toBe(6);
    } finally {
      // A lost job's command has no wrapper left to stop it: end its whole process group here.
      if (pgid > 1) killQuietly(-pgid);
    }
  });

  test("interrupted (SIGINT) before the job ends: exit 4, the job keeps running", async () => {
    const id = sb.submit(["sh", "-c", "echo started; sleep 30; echo never"]);
    const p = sb.spawn(["logs", "--follow", id]);
    try {
      const reader = p.stdout.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toBe("started\n");
      reader.releaseLock();
      process.kill(p.pid, "SIGINT");
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect(stderr).toContain(`${id} is still running; it keeps running`);
      expect(code).toBe(4);
      expect(sb.status(id).state).toBe("running");
    } finally {
      killQuietly(p.pid);
      sb.run(["cancel", "--grace-period", "1s", id]);
    }
  });

  test("--json: log records, then one final record with the state and exit code", async () => {
    const id = sb.submit(["sh", "-c", "echo out; echo err >&2; exit 4"]);
    const r = await follow(id, true);
    const records = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const last = records.pop();
    expect(last).toMatchObject({ job_id: id, state: "failed", exit_code: 4, signal: null });
    expect(last.stream).toBeUndefined();
    expect(records.length).toBeGreaterThan(0);
    for (const rec of records) expect(["stdout", "stderr"]).toContain(rec.stream);
    expect(records.map((rec) => rec.text).join("")).toContain("out\n");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(3);
  });
});
