// A newcomer's first ten minutes, through the compiled binary: --version, help, typos, `run true`,
// job-ID prefixes, `list` columns and counts, hints that name the binary as invoked.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ROOT, Sandbox, until } from "../helpers/cli.ts";
import { structured } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("version and help", () => {
  test("--version, -V and version print the same line; --json works for each", () => {
    const want = sb.run(["version"]).stdout;
    expect(want).toMatch(/^awaitless \d+\.\d+\.\d+\n$/);
    for (const flag of ["--version", "-V"]) {
      const r = sb.run([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(want);
      expect(sb.run([flag, "--json"]).json.version).toBe(want.trim().split(" ")[1]);
    }
  });

  test("bare awaitless, help and --help print the command list and exit 0", () => {
    const bare = sb.run([]);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain("Usage:");
    expect(bare.stdout).toContain("help [command]");
    expect(sb.run(["help"]).stdout).toBe(bare.stdout);
    expect(sb.run(["--help"]).stdout).toBe(bare.stdout);
  });

  test("help COMMAND is COMMAND --help; an unknown topic gets the nearest command", () => {
    const h = sb.run(["help", "run"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain("run [options] -- <command>");
    expect(h.stdout).toBe(sb.run(["run", "--help"]).stdout);
    const bad = sb.run(["help", "stauts"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no help for "stauts": it is not a command (did you mean `status`?)');
  });

  test("typos before a command, and of an action, shell, list or client, get the nearest name", () => {
    const flag = sb.run(["--verison"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("(did you mean `--version`?)");
    for (const [args, message] of [
      [["queue", "lsit"], 'unknown queue action "lsit" (did you mean `list`?)'],
      [["completion", "bsah"], 'no completions for shell "bsah" (did you mean `bash`?)'],
      [["completion", "--list", "host"], "--list host: nothing to list by that name (did you mean `hosts`?)"],
      [["mcp-config", "cladue"], 'unknown MCP client "cladue" (did you mean `claude`?)'],
    ] as const) {
      const r = sb.run([...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

describe("the command goes after --", () => {
  const cases: [string[], string][] = [
    [["run", "true"], "put the command after --: awaitless run -- true"],
    [
      ["submit", "--name", "x", "sleep", "1"],
      "put the command after --: awaitless submit [options] -- sleep 1",
    ],
    [["run", "echo", "a b"], "put the command after --: awaitless run -- echo 'a b'"],
  ];
  for (const [args, hint] of cases) {
    test(args.join(" "), () => {
      const before = sb.jobCount();
      const r = sb.run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("before `--`: the command to run goes after it");
      expect(r.stderr).toContain(`hint: ${hint}`);
      expect(sb.jobCount()).toBe(before);
    });
  }
});

describe("job-ID prefixes", () => {
  const box = new Sandbox();
  afterAll(() => box.cleanup());

  test("a unique prefix works for every command that takes a job ID", async () => {
    const id = box.submit(["sh", "-c", "echo prefixed"]);
    const prefix = id.slice(0, -8);
    await until("the job ends", () => box.status(id).state === "succeeded");
    // The only job of this sandbox so far: any prefix of 6+ characters after job_ is unique.
    expect(box.run(["status", "--json", prefix]).json.job_id).toBe(id);
    expect(box.run(["logs", prefix]).stdout).toContain("prefixed");
    expect(box.run(["inspect", "--json", prefix]).json.job.job_id).toBe(id);
    expect(box.run(["wait", "--json", prefix]).code).toBe(0);
    expect(box.run(["cancel", prefix]).stdout).toContain(`${id} had already ended`);
    const feed = box.run(["completions", "--json", prefix, "--timeout", "1s"]);
    expect(feed.json.completions[0].job_id).toBe(id);
  });

  test("an ambiguous prefix lists the candidates; a short one and an unmatched one are refused", () => {
    // IDs start with their creation time: two jobs made back to back share a long prefix.
    let a = box.submit(["true"]);
    let b = box.submit(["true"]);
    for (let i = 0; i < 5 && a.slice(0, 12) !== b.slice(0, 12); i++) [a, b] = [b, box.submit(["true"])];
    expect(a.slice(0, 12)).toBe(b.slice(0, 12));
    const shared = a.slice(0, 12);
    const amb = box.run(["status", shared]);
    expect(amb.code).toBe(2);
    expect(amb.stderr).toContain(`job ID prefix ${shared} is ambiguous:`);
    expect(amb.stderr).toContain(a);
    expect(amb.stderr).toContain(b);
    const short = box.run(["status", "job_01M8"]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("is too short (4 of at least 6 characters after job_)");
    const none = box.run(["logs", "job_ZZZZZZZZ"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no job ID starts with job_ZZZZZZZZ");
  });

  test("MCP takes full job IDs only", async () => {
    const id = box.submit(["true"]);
    const conn = await connectStdio("legacy", box.env, box.work);
    try {
      const prefixed = structured<{ error: { code: string; message: string } }>(
        await conn.client.callTool({ name: "get_job_status", arguments: { job_id: id.slice(0, -4) } }),
      );
      expect(prefixed.error.code).toBe("invalid_argument");
      expect(prefixed.error.message).toContain("is not a job ID");
      const full = structured<{ job_id: string }>(
        await conn.client.callTool({ name: "get_job_status", arguments: { job_id: id } }),
      );
      expect(full.job_id).toBe(id);
    } finally {
      await conn.close();
    }
  });
});

describe("list", () => {
  const box = new Sandbox();
  afterAll(() => box.cleanup());

  test("host, queue, name and command columns; a queued job has an age, not a duration; N of M shown", async () => {
    expect(box.run(["queue", "create", "solo", "--concurrency", "1"]).code).toBe(0);
    const holder = box.submit(["sleep", "30"], ["--queue", "solo", "--name", "holder"]);
    await until("the holder runs", () => box.status(holder).state === "running");
    const waiting = box.submit(["echo", "queued-cmd"], ["--queue", "solo", "--name", "waiter"]);
    const plain = box.submit(["echo", "plain"]);
    try {
      const r = box.run(["list"]);
      expect(r.code).toBe(0);
      const [head, ...rows] = r.stdout.trimEnd().split("\n");
      expect(head!.split(/\s{2,}/)).toEqual([
        "JOB",
        "STATE",
        "AGE",
        "DURATION",
        "EXIT",
        "HOST",
        "QUEUE",
        "NAME",
        "COMMAND",
      ]);
      const row = (id: string) => rows.find((l) => l.startsWith(id))!.split(/\s{2,}/);
      const q = row(waiting);
      expect(q[1]).toBe("queued");
      expect(q[2]).toMatch(/^\d/); // its age
      expect(q[3]).toBe("-"); // no duration while it waits
      expect(q.slice(5)).toEqual(["local", "solo", "waiter", "echo queued-cmd"]);
      expect(row(holder).slice(5)).toEqual(["local", "solo", "holder", "sleep 30"]);
      expect(row(plain).slice(-3)).toEqual(["-", "-", "echo plain"]);
      expect(r.stderr).toBe("");

      const limited = box.run(["list", "--limit", "2"]);
      expect(limited.stdout.trimEnd().split("\n")).toHaveLength(3);
      expect(limited.stderr).toBe("2 of 3 shown (--limit 3 for all)\n");
      const json = box.run(["list", "--json", "--limit", "2"]).json;
      expect(json).toEqual({ jobs: expect.any(Array) });
      expect(json.jobs).toHaveLength(2);
      expect(json.jobs.map((j: { queue: string | null }) => j.queue)).toContain("solo");
    } finally {
      box.run(["cancel", waiting]);
      box.run(["cancel", holder]);
    }
  });
});

describe("hints name the binary as it can be run again", () => {
  const hintOf = (r: { stderr: string }) => /wait for it: (.*) wait job_/.exec(r.stderr)?.[1];

  test("by the path typed when PATH does not find it; `awaitless` when PATH finds this binary", () => {
    const run = (cmd: string, env: Record<string, string>) => {
      const p = Bun.spawnSync([cmd, "submit", "--", "true"], {
        cwd: ROOT,
        env: { ...sb.env, ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      return { stderr: p.stderr.toString() };
    };
    expect(hintOf(run("./dist/awaitless", { PATH: "/usr/bin:/bin" }))).toBe("./dist/awaitless");
    expect(hintOf(run(BINARY, { PATH: "/usr/bin:/bin" }))).toBe(BINARY);
    const linkDir = join(sb.root, "bin");
    mkdirSync(linkDir, { recursive: true });
    symlinkSync(BINARY, join(linkDir, "awaitless"));
    expect(hintOf(run("awaitless", { PATH: `${linkDir}:/usr/bin:/bin` }))).toBe("awaitless");
    expect(hintOf(run("./dist/awaitless", { PATH: `${linkDir}:/usr/bin:/bin` }))).toBe("awaitless");
  });

  test("a detached run's next: line runs as printed", () => {
    const p = Bun.spawnSync(["./dist/awaitless", "run", "--inline-timeout", "0.2s", "--", "sleep", "1"], {
      cwd: ROOT,
      env: { ...sb.env, PATH: "/usr/bin:/bin" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(p.exitCode).toBe(4);
    const next = /next: (.*)/.exec(p.stdout.toString())?.[1];
    expect(next).toMatch(/^\.\/dist\/awaitless wait job_/);
    const again = Bun.spawnSync(next!.split(" "), { cwd: ROOT, env: { ...sb.env, PATH: "/usr/bin:/bin" } });
    expect(again.exitCode).toBe(0);
  });

  test("the demo's Try: lines run as printed", () => {
    const p = Bun.spawnSync(["./dist/awaitless", "demo"], {
      cwd: ROOT,
      env: { ...sb.env, PATH: "/usr/bin:/bin" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(p.exitCode, p.stderr.toString()).toBe(0);
    const tries = p.stdout
      .toString()
      .split("Try:\n")[1]!
      .trim()
      .split("\n")
      .map((l) => l.trim());
    expect(tries).toHaveLength(3);
    for (const line of tries) {
      expect(line).toMatch(/^\.\/dist\/awaitless (status|logs|inspect) job_/);
      const words = line.split(" ");
      const again = Bun.spawnSync(words, { cwd: ROOT, env: { ...sb.env, PATH: "/usr/bin:/bin" } });
      expect(again.exitCode, line).toBe(0);
    }
  });
});
