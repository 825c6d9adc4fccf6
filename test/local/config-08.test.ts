// An Awaitless 0.8 user's config and command names, through the compiled binary: the README's configs
// (test/fixtures/awaitless-08-configs, verbatim) are accepted with one notice on stderr, never in --json or MCP
// stdout; awaitless-mcp / awaitless-runner links serve MCP with `--config FILE` as 0.8's did; `pending` = queued.
import { afterAll, describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { BINARY, Sandbox, until } from "../helpers/cli.ts";
import { structured, textOf } from "../mcp/harness.ts";
import { connectStdio } from "../mcp/stdio-client.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "awaitless-08-configs");
const sb = new Sandbox();
// 0.8 users name the file with --config (as the README's MCP entry does), so the environment must not.
delete sb.env.AWAITLESS_CONFIG;
afterAll(() => sb.cleanup());
const notices = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("note:")).length;

describe("the 0.8 README's configs", () => {
  for (const name of ["ssh.toml", "slurm.toml", "examples-config.toml"]) {
    test(`${name}: accepted; one notice on stderr, stdout stays one JSON document`, () => {
      const r = sb.run(["list", "--json", "--config", join(FIXTURES, name)]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ jobs: [] });
      expect(notices(r.stderr)).toBe(1);
      expect(r.stderr).toContain("poll_interval = ");
      expect(r.stderr).toContain("is read as poll_interval_seconds");
      expect(r.stderr).toContain("docs/migrating.md");
    });
  }

  test("a job runs under the SSH example (local backend), and the notice is still said once", () => {
    const r = sb.run(["run", "--json", "--config", join(FIXTURES, "ssh.toml"), "--", "echo", "from-0.8"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.stringify(r.json)).toContain("from-0.8");
    expect(notices(r.stderr)).toBe(1);
  });

  test("a host with 0.8's execution profile refuses launches there, creating nothing", async () => {
    const own = new Sandbox();
    try {
      own.writeConfig(
        '[hosts.npu]\nhostname = "127.0.0.1"\nuser_group = "HwHiAiUser"\nsources = ["env.sh"]\n',
      );
      expect(own.run(["list"]).code).toBe(0);
      const r = own.run(["submit", "--json", "--backend", "ssh", "--host", "npu", "--", "true"]);
      expect(r.code).toBe(2);
      expect(r.json.error.message).toContain("[hosts.npu]");
      expect(r.json.error.message).toContain("user_group, sources");
      expect(r.stderr).toContain("sg GROUP");
      const conn = await connectStdio("legacy", own.env, own.work);
      try {
        const res = await conn.client.callTool({
          name: "submit_job",
          arguments: { command: ["true"], backend: "ssh", host: "npu" },
        });
        expect(res.isError).toBe(true);
        expect(textOf(res)).toContain("user_group, sources");
        expect(textOf(res)).toContain("env argument");
        expect(textOf(res)).not.toContain("--env");
      } finally {
        await conn.close();
      }
      expect(own.jobCount()).toBe(0);
    } finally {
      own.cleanup();
    }
  });
});

describe("0.8's server commands", () => {
  for (const name of ["awaitless-mcp", "awaitless-runner", "awaitless mcp"]) {
    test(`${name} --config FILE (the README's MCP entry) serves the tools; stdout is only JSON-RPC`, async () => {
      const config = ["--config", join(FIXTURES, "slurm.toml")];
      let launch = { command: BINARY, args: ["mcp", ...config] };
      if (name !== "awaitless mcp") {
        launch = { command: join(sb.root, name), args: config };
        symlinkSync(BINARY, launch.command);
      }
      const conn = await connectStdio("legacy", sb.env, sb.work, undefined, launch);
      try {
        const tools = (await conn.client.listTools()).tools.map((t) => t.name);
        for (const tool of ["run", "submit_job", "wait_for_job", "get_job_status", "list_jobs", "cancel_job"])
          expect(tools).toContain(tool);
        const listed = await conn.client.callTool({ name: "list_jobs", arguments: { state: "pending" } });
        expect(listed.isError ?? false).toBe(false);
        expect(structured<{ jobs: unknown[] }>(listed).jobs).toEqual([]);
        await until("the notice on the server's stderr", () => notices(conn.stderr()) === 1);
        expect(conn.stderr()).toContain("poll_interval = 10 is read as poll_interval_seconds = 10");
      } finally {
        await conn.close();
      }
    });
  }
});

describe("--state pending", () => {
  test("lists queued jobs (0.8's word), on the CLI and in list_jobs", async () => {
    const own = new Sandbox();
    const ids: string[] = [];
    try {
      expect(own.run(["queue", "create", "one", "--concurrency", "1"]).code).toBe(0);
      ids.push(own.submit(["sleep", "30"], ["--queue", "one"]));
      ids.push(own.submit(["sleep", "30"], ["--queue", "one"]));
      await until("the second job queued", () => own.status(ids[1]!).state === "queued");
      const r = own.run(["list", "--state", "pending", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[1]]);
      expect(r.json.jobs[0].state).toBe("queued");
      const conn = await connectStdio("legacy", own.env, own.work);
      try {
        const listed = await conn.client.callTool({ name: "list_jobs", arguments: { state: "pending" } });
        const jobs = structured<{ jobs: Array<{ job_id: string }> }>(listed).jobs;
        expect(jobs.map((j) => j.job_id)).toEqual([ids[1]!]);
      } finally {
        await conn.close();
      }
    } finally {
      for (const id of ids) own.run(["cancel", id, "--grace-period", "0s"]);
      own.cleanup();
    }
  });
});
