// Strict inputs through the official client against the compiled binary: unknown arguments are refused with the
// nearest known name, and every advertised input schema is typed, bounded, described and closed.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { structured, textOf } from "./harness.ts";
import { BINARY, connectStdio, makeSandbox } from "./stdio-client.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function session(era: "legacy" | "modern" = "legacy", extraEnv: Record<string, string> = {}) {
  const box = makeSandbox(extraEnv);
  cleanups.push(box.remove);
  const conn = await connectStdio(era, box.env, box.root);
  cleanups.push(conn.close);
  return { box, ...conn };
}

type ErrorBody = {
  error: { code: string; message: string; hint: string; did_you_mean?: Record<string, string> };
};

function jobsIn(dataDir: string): string[] {
  const dir = path.join(dataDir, "jobs");
  return existsSync(dir) ? readdirSync(dir) : [];
}

for (const era of ["legacy", "modern"] as const) {
  describe(`unknown tool arguments (${era})`, () => {
    test("run with cwdd is refused naming cwd, and nothing is launched", async () => {
      const { client, box } = await session(era);
      const result = await client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", "pwd > where.txt"], cwdd: "/tmp" },
      });
      expect(result.isError).toBe(true);
      const body = structured<ErrorBody>(result);
      expect(body.error.code).toBe("invalid_argument");
      expect(body.error.message).toContain("`cwdd`");
      expect(body.error.message).toContain("did you mean `cwd`?");
      expect(body.error.hint).toContain("cwdd → cwd");
      expect(body.error.did_you_mean).toEqual({ cwdd: "cwd" });
      expect(textOf(result)).toContain("did you mean `cwd`?");
      const list = structured<{ count: number }>(await client.callTool({ name: "list_jobs", arguments: {} }));
      expect(list.count).toBe(0);
      expect(jobsIn(box.env.AWAITLESS_DATA_DIR!)).toEqual([]);
      expect(existsSync(path.join(box.root, "where.txt"))).toBe(false);
    }, 20_000);
  });
}

describe("unknown tool names", () => {
  test("a name an object has of its own (toString, __proto__, constructor) is an unknown tool like any other", async () => {
    const { client } = await session();
    for (const name of ["toString", "__proto__", "constructor", "hasOwnProperty"]) {
      let refused: unknown;
      await client.callTool({ name, arguments: {} }).catch((e: unknown) => {
        refused = e;
      });
      expect({ name, refused: String(refused) }).toMatchObject({
        name,
        refused: expect.stringContaining(`Tool ${name} not found; the tools are: run, submit_job,`),
      });
    }
    expect(
      structured<{ count: number }>(await client.callTool({ name: "list_jobs", arguments: {} })).count,
    ).toBe(0);
  }, 20_000);
});

describe("unknown tool arguments on every tool", () => {
  test("each tool refuses a misspelt argument, naming the nearest known one; a far-off name is just named", async () => {
    const { client } = await session();
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ["submit_job", { command: ["true"], timeout_secnds: 5 }, "timeout_secnds", "timeout_seconds"],
      ["wait_for_job", { job_id: "job_x", timeout: 5 }, "timeout", "timeout_seconds"],
      ["get_job_logs", { job_id: "job_x", tail_line: 5 }, "tail_line", "tail_lines"],
      ["list_jobs", { limt: 5 }, "limt", "limit"],
      ["cancel_job", { job_id: "job_x", grace_period: 1 }, "grace_period", "grace_period_seconds"],
      ["create_queue", { name: "q", concurency: 1 }, "concurency", "concurrency"],
      ["wait_for_completions", { job_ids: ["job_x"], cursor: "c" }, "cursor", "after_cursor"],
    ];
    for (const [name, args, bad, near] of cases) {
      const body = structured<ErrorBody>(await client.callTool({ name, arguments: args }));
      expect(body.error?.code).toBe("invalid_argument");
      expect(body.error.message).toContain(`\`${bad}\` (did you mean \`${near}\`?)`);
    }
    const far = structured<ErrorBody>(
      await client.callTool({ name: "get_job_status", arguments: { job_id: "job_x", colour: "red" } }),
    );
    expect(far.error.message).toContain("unknown argument `colour`");
    expect(far.error.message).not.toContain("did you mean");
    expect(far.error.hint).toContain("Remove colour");
    expect(far.error.hint).toContain("job_id");
    const both = structured<ErrorBody>(
      await client.callTool({ name: "run", arguments: { command: ["true"], cwdd: "/tmp", colour: "red" } }),
    );
    expect(both.error.message).toContain("unknown arguments `cwdd` (did you mean `cwd`?), `colour`");
    expect(both.error.hint).toContain("Rename cwdd → cwd, remove colour and call again");
  }, 30_000);
});

type Prop = Record<string, unknown>;
type ObjectSchema = { type: string; properties: Record<string, Prop>; additionalProperties?: unknown };

describe("arguments a client injects (Gemini CLI's wait_for_previous)", () => {
  test("accepted and ignored on every tool, never advertised; a mistyped one is still refused by name", async () => {
    const box = makeSandbox();
    cleanups.push(box.remove);
    const conn = await connectStdio("legacy", box.env, box.root, "gemini-cli-mcp-client");
    cleanups.push(conn.close);
    const { client } = conn;
    // Gemini CLI sends it on a call that depends on an earlier one, exactly as its prompt asks
    const ran = await client.callTool({
      name: "run",
      arguments: { command: ["sh", "-c", "echo ran > ran.txt; echo ran"], wait_for_previous: true },
    });
    expect(ran.isError).toBeFalsy();
    expect(textOf(ran)).toContain("succeeded");
    expect(existsSync(path.join(box.root, "ran.txt"))).toBe(true);
    const jobId = (ran.structuredContent as { job_id: string }).job_id;
    for (const [name, args] of [
      ["wait_for_job", { job_id: jobId }],
      ["get_job_status", { job_id: jobId }],
      ["get_job_logs", { job_id: jobId }],
      ["list_jobs", {}],
    ] as const) {
      const r = await client.callTool({ name, arguments: { ...args, wait_for_previous: false } });
      expect({ name, isError: r.isError ?? false }).toEqual({ name, isError: false });
    }
    const { tools } = await client.listTools();
    for (const tool of tools) {
      expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain("wait_for_previous");
      // listed open: Gemini CLI's own check would refuse an unlisted argument without naming it ("params must NOT
      // have additional properties"); the server refuses it, by name
      expect({ tool: tool.name, closed: "additionalProperties" in tool.inputSchema }).toEqual({
        tool: tool.name,
        closed: false,
      });
    }

    const typo = await client.callTool({
      name: "run",
      arguments: { command: ["true"], wait_for_previos: true, wait_for_previous: true },
    });
    expect(typo.isError).toBe(true);
    expect(textOf(typo)).toContain("unknown argument `wait_for_previos`");
    expect(textOf(typo)).not.toContain("`wait_for_previous`");
    expect(
      structured<{ count: number }>(await client.callTool({ name: "list_jobs", arguments: {} })).count,
    ).toBe(1);
  }, 30_000);
});

describe("open schemas by client name on both protocol generations", () => {
  for (const era of ["legacy", "modern"] as const) {
    test(`${era}: Qwen Code gets every schema without additionalProperties: false; the server names an unknown argument`, async () => {
      const box = makeSandbox();
      cleanups.push(box.remove);
      const conn = await connectStdio(era, box.env, box.root, "qwen-code");
      cleanups.push(conn.close);
      const { tools } = await conn.client.listTools();
      for (const tool of tools)
        expect({ tool: tool.name, closed: "additionalProperties" in tool.inputSchema }).toEqual({
          tool: tool.name,
          closed: false,
        });
      const typo = await conn.client.callTool({ name: "list_jobs", arguments: { limt: 5 } });
      expect(typo.isError).toBe(true);
      // Qwen Code's model reads an error's raw result: structuredContent holds it (docs/mcp.md)
      expect(structured<ErrorBody>(typo).error.did_you_mean).toEqual({ limt: "limit" });
    }, 30_000);
  }
});

describe("advertised input schemas (tools/list through the official client)", () => {
  test("every tool: closed object, every property described, integers and bounds kept", async () => {
    const { client } = await session();
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool.inputSchema as unknown as ObjectSchema]));
    expect(byName.size).toBeGreaterThanOrEqual(11);
    for (const [name, schema] of byName) {
      expect({ name, type: schema.type, additionalProperties: schema.additionalProperties }).toEqual({
        name,
        type: "object",
        additionalProperties: false,
      });
      for (const [prop, spec] of Object.entries(schema.properties)) {
        expect({ tool: name, prop, described: typeof spec.description === "string" }).toEqual({
          tool: name,
          prop,
          described: true,
        });
        expect((spec.description as string).length).toBeGreaterThan(5);
        // typed: a JSON type, or a union of typed alternatives (command: a string or an argv array)
        const typed = typeof spec.type === "string" || Array.isArray(spec.anyOf);
        expect({ tool: name, prop, typed }).toEqual({ tool: name, prop, typed: true });
      }
    }
    const prop = (tool: string, key: string) => byName.get(tool)?.properties[key];
    expect(prop("get_job_logs", "tail_lines")).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100_000,
    });
    expect(prop("get_job_logs", "max_bytes")).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 1_048_576,
    });
    expect(prop("list_jobs", "limit")).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 });
    expect(prop("wait_for_completions", "limit")).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 500,
    });
    expect(prop("create_queue", "concurrency")).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 10_000,
    });
    // submit_job and run_job list the launch arguments typed and described, as run does.
    for (const tool of ["run", "submit_job", "run_job", "wait_for_job", "wait_for_completions"])
      expect(prop(tool, "timeout_seconds")).toMatchObject({ type: "number", minimum: 0 });
    for (const tool of ["submit_job", "run_job"]) {
      expect(prop(tool, "cwd")).toEqual(prop("run", "cwd")!);
      expect(prop(tool, "command")).toEqual(prop("run", "command")!);
    }
    expect(prop("cancel_job", "grace_period_seconds")).toMatchObject({ type: "number", minimum: 0 });
    expect(prop("run", "command")).toMatchObject({
      anyOf: [
        { type: "string", minLength: 1 },
        { type: "array", items: { type: "string" }, minItems: 1 },
      ],
    });
    expect(prop("get_job_logs", "stream")).toMatchObject({ enum: ["stdout", "stderr", "both"] });
    expect(byName.get("create_queue")).toMatchObject({ required: ["name", "concurrency"] });
  }, 20_000);
});

describe("timeout_seconds: run kills the job, wait_for_job only bounds the wait", () => {
  test("a run whose job hits timeout_seconds says it was killed; a bounded wait says the job was not", async () => {
    const { client } = await session();
    const killed = await client.callTool({
      name: "run",
      arguments: { command: ["sh", "-c", "echo started; sleep 30; echo never"], timeout_seconds: 1 },
    });
    const body = structured<{ delivery: string; state: string }>(killed);
    expect(body.delivery).toBe("inline");
    expect(body.state).toBe("timed_out");
    expect(textOf(killed)).toMatch(
      /was killed by its timeout_seconds limit \(runtime limit of 1s reached\) after .*SIGKILL/,
    );

    const job = structured<{ job_id: string }>(
      await client.callTool({
        name: "submit_job",
        arguments: { command: ["sh", "-c", "echo started; sleep 60; echo never"] },
      }),
    );
    const waited = await client.callTool({
      name: "wait_for_job",
      arguments: { job_id: job.job_id, timeout_seconds: 1 },
    });
    const wait = structured<{ wait_state: string; next_action: string }>(waited);
    expect(wait.wait_state).toBe("client_timeout");
    expect(wait.next_action).toContain("only this wait ended, the job was not killed or changed");
    expect(textOf(waited)).toContain("was not killed");
    const status = structured<{ state: string }>(
      await client.callTool({ name: "get_job_status", arguments: { job_id: job.job_id } }),
    );
    expect(status.state).toBe("running");
    await client.callTool({ name: "cancel_job", arguments: { job_id: job.job_id, grace_period_seconds: 0 } });
  }, 30_000);
});

describe("AWAITLESS_MCP_* values", () => {
  test("a bad value is a config error naming the variable, without a stack trace", () => {
    const box = makeSandbox({ AWAITLESS_MCP_HOLD_BUDGET_MS: "soon" });
    cleanups.push(box.remove);
    const r = Bun.spawnSync([BINARY, "mcp"], {
      env: box.env,
      cwd: box.root,
      stdin: "ignore",
      stderr: "pipe",
    });
    const stderr = r.stderr.toString();
    expect(r.exitCode).toBe(2);
    expect(stderr).toContain('AWAITLESS_MCP_HOLD_BUDGET_MS="soon" is not a whole number of milliseconds');
    expect(stderr).toContain("hint: set AWAITLESS_MCP_HOLD_BUDGET_MS to a whole number");
    expect(stderr).not.toMatch(/\n\s+at |bug/);
  });
});
