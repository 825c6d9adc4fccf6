// CLI conventions through the binary: every command's help has its one-line description and examples, `help --help`
// works, `--last` wherever a job ID is taken, `results` (formerly `completions`) beside the shell `completion`,
// `--json` for every command, `queue set` and `queue delete`.
import { afterAll, describe, expect, test } from "bun:test";
import { BINARY, Sandbox } from "../helpers/cli.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

const COMMANDS = sb.run(["--json"]).json.commands as { name: string; description: string }[];

describe("help", () => {
  test("every command's --help opens with its one-line description and ends with examples", () => {
    expect(COMMANDS.length).toBeGreaterThan(15);
    for (const c of COMMANDS) {
      const h = sb.run([c.name, "--help"]);
      expect(h.code).toBe(0);
      const lines = h.stdout.split("\n");
      expect(lines[0]).toBe(`awaitless ${c.name}: ${c.description}`);
      expect(c.description).not.toContain("\n");
      const at = lines.indexOf("Examples:");
      expect(at).toBeGreaterThan(0);
      expect(lines[at + 1]).toContain("awaitless ");
      // `help NAME` is the same page
      expect(sb.run(["help", c.name]).stdout).toBe(h.stdout);
    }
  });

  test("help --help, help --json and a bare --json work; --json is never its own typo fix", () => {
    const h = sb.run(["help", "--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toStartWith("awaitless help: show help for all commands, or for one\n");
    expect(h.stdout).toContain("$ awaitless help [command]");
    for (const args of [["--json"], ["help", "--json"]]) {
      const r = sb.run(args);
      expect(r.code).toBe(0);
      expect(r.json.commands.map((c: { name: string }) => c.name)).toContain("results");
      expect(r.stderr).not.toContain("did you mean");
    }
    const one = sb.run(["help", "logs", "--json"]).json;
    expect(one).toMatchObject({ command: "logs", usage: "awaitless logs [job_id]" });
    expect(one.options.map((o: { flags: string }) => o.flags)).toContain("-i, --ignore-case");
    expect(one.examples.length).toBeGreaterThan(0);
    // help goes through the same writer as all output: `| head -1` ends quietly
    const head = Bun.spawnSync(["bash", "-o", "pipefail", "-c", `"$0" help run | head -1`, BINARY], {
      env: sb.env,
      stderr: "pipe",
    });
    expect(head.stderr.toString()).toBe("");
  });
});

describe("job IDs", () => {
  test("--last wherever a job ID is taken; an ID and --last together, or neither, are refused", () => {
    const older = sb.submit(["sh", "-c", "echo older"]);
    const id = sb.submit(["sh", "-c", "echo newest-job; exit 3"]);
    expect(sb.run(["wait", "--last"]).code).toBe(3);
    expect(sb.run(["status", "--last", "--json"]).json.job_id).toBe(id);
    expect(sb.run(["logs", "--last", "--stream", "stdout"]).stdout).toBe("newest-job\n");
    expect(sb.run(["inspect", "--last", "--json"]).json.job.job_id).toBe(id);
    expect(sb.run(["results", "--last", "--json"]).json.completions[0].job_id).toBe(id);
    expect(sb.run(["cancel", "--last"]).stdout).toContain(`${id} had already ended (failed)`);
    const both = sb.run(["status", older, "--last"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give either a job ID or --last, not both");
    const none = sb.run(["logs"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("error: logs needs a job ID");
    expect(none.stderr).toContain("awaitless logs JOB_ID, or awaitless logs --last");
    // an array launched last is what --last names
    const arr = sb.run(["submit", "--array", "0-1", "--", "true"]).stdout.trim();
    expect(sb.run(["wait", "--last", "--json"]).json.job_id).toBe(arr);
  });

  test("`results` is the completion feed; `completions` still works, with a note", () => {
    const id = sb.submit(["true"]);
    sb.run(["wait", id]);
    const r = sb.run(["results", id, "--json"]);
    expect(r.json.completions[0].job_id).toBe(id);
    const old = sb.run(["completions", id, "--json"]);
    expect(old.code).toBe(0);
    expect(old.stdout).toBe(r.stdout);
    expect(old.stderr).toContain("note: `completions` is now called `results` (the old name keeps working)");
    expect(r.stderr).toBe("");
    expect(sb.run(["help", "completions"]).stdout).toStartWith("awaitless results: ");
  });
});

describe("--json everywhere", () => {
  test("completion scripts and word lists", () => {
    const s = sb.run(["completion", "bash", "--json"]).json;
    expect(s.shell).toBe("bash");
    expect(s.script).toContain("_awaitless()");
    expect(sb.run(["completion", "--list", "queues", "--json"]).json).toEqual({ list: "queues", words: [] });
  });
});

describe("queues", () => {
  test("queue set changes the concurrency; queue delete refuses a queue in use, then deletes it", () => {
    expect(sb.run(["queue", "create", "q1", "--concurrency", "1"]).code).toBe(0);
    const set = sb.run(["queue", "set", "q1", "--concurrency", "3", "--json"]);
    expect(set.json).toEqual({
      name: "q1",
      target: "local",
      concurrency: 3,
      previous_concurrency: 1,
      waiting_with_previous: 0,
    });
    expect(sb.run(["queue", "list", "--json"]).json.queues[0]).toMatchObject({ name: "q1", concurrency: 3 });
    expect(sb.run(["queue", "set", "q1", "--concurrency", "2"]).stdout).toBe(
      "queue q1 on local: concurrency 3 → 2 for jobs launched from now on\n",
    );
    const id = sb.submit(["sleep", "30"], ["--queue", "q1"]);
    const busy = sb.run(["queue", "delete", "q1"]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain("queue q1 on local is in use: 1 job(s) running, 0 waiting");
    sb.run(["cancel", "--grace-period", "1s", id]);
    expect(sb.run(["queue", "delete", "q1"]).stdout).toBe("deleted queue q1 on local\n");
    expect(sb.run(["queue", "list", "--json"]).json.queues).toEqual([]);
    const gone = sb.run(["submit", "--queue", "q1", "--", "true"]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain("there is no queue q1 on local");
    expect(sb.run(["queue", "set", "nope", "--concurrency", "2"]).stderr).toContain("there is no queue nope");
  });
});

describe("standard input", () => {
  test("a job reads /dev/null and awaitless never reads its own stdin: a `while read` loop keeps every line", () => {
    // Each line is read by the loop, not by `awaitless run` (whose stdin is the rest of the file), and the job's
    // `cat` gets nothing of it (a job outlives this process: its stdin is /dev/null, docs/cli.md).
    const script = `printf 'one\\ntwo\\nthree\\n' > "$1"
while read -r word; do
  "$2" run --json -- sh -c 'printf "%s:" "$1"; cat; echo' sh "$word" || exit 9
done < "$1"`;
    const r = Bun.spawnSync(["sh", "-c", script, "sh", `${sb.work}/lines.txt`, BINARY], {
      env: sb.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(0);
    const tails = r.stdout
      .toString()
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { stdout_tail: string }).stdout_tail);
    expect(tails).toEqual(["one:\n", "two:\n", "three:\n"]);
  });
});
