// Each surface speaks its own language: failing calls through the MCP server (official client, compiled binary)
// never get CLI wording in their hints, and the same failures on the CLI never name MCP tools.
import { afterAll, describe, expect, test } from "bun:test";
import { TOOLS } from "../../src/mcp/tools/catalog.ts";
import { Sandbox } from "../helpers/cli.ts";
import { structured } from "./harness.ts";
import { connectStdio } from "./stdio-client.ts";

/** CLI wording: an awaitless command line or a --flag. */
const CLI_WORDS = /\bawaitless [a-z]|(^|[\s(`'"/])--[a-z]/;
/** MCP wording: a tool's name, or the protocol itself. */
const MCP_WORDS = new RegExp(
  `\\b(${Object.keys(TOOLS)
    .filter((name) => name !== "run")
    .join("|")}|MCP)\\b`,
);
const MISSING = "job_01ARZ3NDEKTSV4RRFFQ69G5FAV";

const sb = new Sandbox();
afterAll(() => sb.cleanup());

describe("hints stay on their own surface", () => {
  test("MCP: failing tool calls and resource reads carry no CLI wording", async () => {
    const conn = await connectStdio(
      "legacy",
      { ...sb.env, PATH: process.env.PATH ?? "/usr/bin:/bin" },
      sb.work,
    );
    try {
      const { client } = conn;
      await client.callTool({ name: "create_queue", arguments: { name: "q1", concurrency: 1 } });
      const calls: Array<[string, Record<string, unknown>]> = [
        ["run", { command: ["true"], cwd: "/nonexistent/awl" }],
        ["run", { command: ["true"], env: { "1BAD": "x" } }],
        ["run", { command: ["true"], host: "gpu", backend: "local" }],
        ["run", { command: ["true"], backend: "ssh" }],
        ["run", { command: ["true"], secret_env: ["AWL_SURFACE_UNSET"] }],
        ["run", { command: ["true"], timeout_seconds: 0 }],
        ["run", { command: ["true"], resources: ["no-equals"] }],
        ["run", { command: ["true"], slurm_options: { partition: "a" } }],
        ["run", { command: ["true"], backend: "slurm", host: "cluster", queue: "q1" }],
        ["run", { command: [] }],
        ["run", { command: ["true"], cwdd: "/tmp" }],
        ["submit_job", { command: ["true"], queue: "nosuch" }],
        ["get_job_status", { job_id: "nope" }],
        ["get_job_status", { job_id: MISSING }],
        ["get_job_logs", { job_id: MISSING }],
        ["cancel_job", { job_id: "nope" }],
        ["wait_for_job", { job_id: MISSING }],
        ["wait_for_completions", { job_ids: ["nope"] }],
        ["create_queue", { name: "bad/name", concurrency: 1 }],
        ["create_queue", { name: "q1", concurrency: 2 }],
      ];
      for (const [name, args] of calls) {
        const result = await client.callTool({ name, arguments: args });
        const hint = structured<{ error?: { hint: string } }>(result).error?.hint;
        expect({ name, args, isError: result.isError, hasHint: (hint ?? "").length > 5 }).toEqual({
          name,
          args,
          isError: true,
          hasHint: true,
        });
        expect({ name, args, hint: hint!.match(CLI_WORDS)?.[0] ?? null }).toEqual({ name, args, hint: null });
      }
      for (const uri of ["awaitless://jobs/nope", `awaitless://jobs/${MISSING}`]) {
        const error = await client.readResource({ uri }).then(
          () => undefined,
          (e: { code?: number; message: string }) => e,
        );
        // Invalid params, not -32603: the SDK also sends a missing resource as -32602 on this protocol version.
        expect(error?.code).toBe(-32602);
        expect(error?.message).toContain("list_jobs");
        expect(error?.message).not.toMatch(CLI_WORDS);
      }
    } finally {
      await conn.close();
    }
  }, 60_000);

  test("CLI: the same failures name commands and flags, never MCP tools", () => {
    expect(sb.run(["queue", "create", "q2", "--concurrency", "1"]).code).toBe(0);
    const commands: string[][] = [
      ["submit", "--cwd", "/nonexistent/awl", "--", "true"],
      ["submit", "--env", "1BAD=x", "--", "true"],
      ["submit", "--host", "gpu", "--backend", "local", "--", "true"],
      ["submit", "--backend", "ssh", "--", "true"],
      ["submit", "--secret-env", "AWL_SURFACE_UNSET", "--", "true"],
      ["submit", "--resource", "no-equals", "--", "true"],
      ["submit", "--slurm-option", "partition=a", "--", "true"],
      ["submit", "--backend", "slurm", "--host", "cluster", "--queue", "q2", "--", "true"],
      ["submit", "--"],
      ["submit", "--log-dir", " ", "--", "true"],
      ["submit", "--host", "gpu", "--log-dir", "logs", "--", "true"],
      ["submit", "--queue", "nosuch", "--", "true"],
      ["status", "nope"],
      ["status", MISSING],
      ["logs", MISSING],
      ["cancel", "nope"],
      ["wait", MISSING],
      ["queue", "create", "bad/name", "--concurrency", "1"],
      ["queue", "create", "q2", "--concurrency", "2"],
    ];
    for (const args of commands) {
      const words = args[0] === "queue" ? 2 : 1;
      const r = sb.run([...args.slice(0, words), "--json", ...args.slice(words)]);
      const hint: string = r.json?.error?.hint ?? "";
      expect({ args, failed: r.code !== 0, hasHint: hint.length > 5 }).toEqual({
        args,
        failed: true,
        hasHint: true,
      });
      expect({ args, word: `${hint}\n${r.stderr}`.match(MCP_WORDS)?.[0] ?? null }).toEqual({
        args,
        word: null,
      });
    }
    // A wait that ends before the job: its next_action is the CLI's own sentence.
    const id = sb.run(["submit", "--", "sh", "-c", "echo started; sleep 60"]).stdout.trim();
    try {
      const waited = sb.run(["wait", id, "--timeout", "1s", "--json"]);
      expect(waited.code).toBe(4);
      expect(waited.json.next_action).toContain("only this wait ended, the job was not killed");
      expect(waited.json.next_action).toContain(`awaitless wait ${id}`);
      expect(`${waited.stdout}\n${waited.stderr}`).not.toMatch(MCP_WORDS);
    } finally {
      sb.run(["cancel", id, "--grace-period", "0"]);
    }
  });
});
