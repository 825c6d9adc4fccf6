// What each client's model receives, through the binary and the official client: compact structuredContent, a text
// that holds the whole result (each real client hands its model one of the two), byte budgets, tools/list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gatedCommand } from "../helpers/cli.ts";
import type { Era } from "./harness.ts";
import { structured, textOf } from "./harness.ts";
import { connectStdio, makeSandbox } from "./stdio-client.ts";

type Json = Record<string, unknown>;
type Conn = Awaited<ReturnType<typeof connectStdio>>;

/** The JSON-RPC response line the client received for the request with this id (bytes as on the pipe). */
function responseBytes(conn: Conn, method: string): { bytes: number; message: Json } {
  const sent = conn.tap.log.filter((e) => e.dir === ">>" && e.message.method === method).at(-1);
  const id = sent?.message.id;
  const got = conn.tap.log.find((e) => e.dir === "<<" && e.message.id === id && "result" in e.message);
  if (got === undefined) throw new Error(`no response to ${method}`);
  return { bytes: Buffer.byteLength(JSON.stringify(got.message)), message: got.message };
}

/**
 * What each client hands its model of a successful result (docs/mcp.md "What each client's model receives"):
 * Claude Code and Codex the structuredContent as JSON; Gemini CLI each text block in <untrusted_context>; opencode
 * the text blocks as they are; Qwen Code both (it gets no structuredContent, so the text alone).
 */
function asModelsReceiveIt(result: Json): Record<string, string> {
  const text = textOf(result);
  return {
    "Claude Code / Codex": JSON.stringify(result.structuredContent),
    "Gemini CLI": `<untrusted_context>\n${text}\n</untrusted_context>`,
    "Qwen Code / opencode": text,
  };
}

const sizesOf = (result: Json): Record<string, number> =>
  Object.fromEntries(
    Object.entries(asModelsReceiveIt(result)).map(([who, body]) => [who, Buffer.byteLength(body)]),
  );

/** What a compact answer leaves out (docs/protocol.md, "Waiting and delivery"): null, empty, false, 0. */
const saysNothing = (v: unknown) =>
  v === null ||
  v === "" ||
  v === false ||
  v === 0 ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === "object" && v !== null && Object.keys(v).length === 0);

/** Every string (of 4 characters or more) and number inside a value, keys left out. */
function leavesOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") {
    if (value.length >= 4) out.push(value);
  } else if (typeof value === "number") out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) leavesOf(item, out);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) leavesOf(item, out);
  return out;
}

/** Bookkeeping the text leaves to structuredContent (docs/mcp.md): timestamps, the snapshot, the envelope. */
const NOT_IN_TEXT = new Set([
  "created_at",
  "started_at",
  "finished_at",
  "snapshot",
  "waited_seconds",
  "wait_state",
  "delivery_state",
  "delivery",
  "backend",
  "stdout_bytes",
  "stderr_bytes",
  "stdout_dropped_bytes",
  "stderr_dropped_bytes",
  "truncated",
  "descendants_alive",
  "idempotent_replay",
]);

for (const era of ["legacy", "modern"] as Era[]) {
  describe(`what each model receives (${era})`, () => {
    const box = makeSandbox();
    let conn: Conn;
    beforeAll(async () => {
      conn = await connectStdio(era, box.env, box.root);
    });
    afterAll(async () => {
      await conn?.close();
      box.remove();
    });

    test("tools/list fits in 11 KiB and every tool still says when and when not to use it", async () => {
      const { tools } = await conn.client.listTools();
      const { bytes } = responseBytes(conn, "tools/list");
      // 10 755 / 10 898 B (2025 / 2026 framing): every property of every tool typed and described
      expect(bytes).toBeLessThanOrEqual(11_264);
      expect(tools.length).toBeGreaterThanOrEqual(11);
      for (const tool of tools) {
        const description = tool.description ?? "";
        expect({ tool: tool.name, when: /\b(use|default for)\b/i.test(description) }).toEqual({
          tool: tool.name,
          when: true,
        });
        expect({ tool: tool.name, whenNot: /\bnot (for|needed)\b/i.test(description) }).toEqual({
          tool: tool.name,
          whenNot: true,
        });
      }
    });

    test("a quick success: what each model receives within its budget, compact structured, every piece in the text", async () => {
      const result = (await conn.client.callTool({
        name: "run",
        arguments: { command: ["echo", "hi"] },
      })) as Json;
      const { bytes } = responseBytes(conn, "tools/call");
      const s = result.structuredContent as Json;
      expect(s).toMatchObject({ state: "succeeded", exit_code: 0, stdout_tail: "hi\n", delivery: "inline" });
      // compact: nothing null, empty, false or 0 but the exit code, here or in resources; no job_state repeating
      // state; no leftovers of count 0, no descendants_alive beside it
      for (const [key, value] of Object.entries({ ...s, ...(s.resources as Json) }))
        if (key !== "exit_code") expect({ key, silent: saysNothing(value) }).toEqual({ key, silent: false });
      for (const absent of [
        "job_state",
        "leftovers",
        "descendants_alive",
        "truncated",
        "idempotent_replay",
        "waited_seconds",
      ])
        expect(s).not.toHaveProperty(absent);
      // the whole answer is here: no link to follow
      expect(JSON.stringify(result.content)).not.toContain("resource_link");
      const sizes = sizesOf(result);
      console.log(
        `run echo hi (${era}): wire ${bytes} B; as each model receives it: ${JSON.stringify(sizes)}`,
      );
      // measured 537–588 B (537 when both CPU figures of resources are 0, 588 when both are over 0); 611 B with
      // waited_seconds, 840 B before false, 0 and leftovers of count 0 were left out, 943 B before the compact form
      expect(sizes["Claude Code / Codex"]!).toBeLessThanOrEqual(600);
      // measured 130 / 91 B: the text of a quick command has no resources line (its figures are tiny)
      expect(sizes["Gemini CLI"]!).toBeLessThanOrEqual(150);
      expect(sizes["Qwen Code / opencode"]!).toBeLessThanOrEqual(110);
      const text = textOf(result);
      expect(text).toBe(
        `Job ${s.job_id as string} succeeded (exit code 0) after ${text.split(" after ")[1]!.split("\n")[0]}\nstdout (3 bytes):\nhi`,
      );
      expect(text).not.toContain("Resources");
    });

    test("a failure: the text holds state, exit code, duration, digest, tails, parsed results and artifacts", async () => {
      const dir = path.join(box.root, "w-fail");
      mkdirSync(dir, { recursive: true });
      const script =
        'mkdir -p out; printf \'{"passed": 41, "failed": 1, "slowest": "test_io"}\' > out/r.json; ' +
        "echo 'collected 42 items'; echo 'FAILED test_io.py::test_read - AssertionError: 3 != 4' >&2; exit 1";
      const result = (await conn.client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", script], cwd: dir, artifacts: ["out/r.json"], name: "pytest" },
      })) as Json;
      expect(result.isError).toBe(true);
      const s = result.structuredContent as Json;
      const text = textOf(result);
      expect(text).toContain(
        `Job ${s.job_id as string} (pytest) failed with exit code 1 (nonzero_exit) after`,
      );
      expect(text).toContain("Digest:\nFAILED test_io.py::test_read - AssertionError: 3 != 4");
      expect(text).toContain("stdout (19 bytes):\ncollected 42 items");
      expect(text).toContain("stderr (");
      expect(text).toContain('parsed_results: {"failed":1,"passed":41,"slowest":"test_io"}');
      expect(text).toContain("- out/r.json:");
      // Every value of the result that a next step needs is in the text: each string and number of it, outside the
      // bookkeeping docs/mcp.md lists.
      const sizes = sizesOf(result);
      console.log(`a failure (${era}): ${JSON.stringify(sizes)}`);
      // measured 1 316–1 342 B / 567–569 B (the digest, both tails, parsed results, an artifact, the error's
      // suggestion; the artifact's path is the sandbox's)
      expect(sizes["Claude Code / Codex"]!).toBeLessThanOrEqual(1400);
      expect(sizes["Qwen Code / opencode"]!).toBeLessThanOrEqual(600);
      // a quick command's tiny CPU and memory figures are left to structuredContent (docs/mcp.md)
      const r = s.resources as Json;
      expect((r.max_rss_bytes as number) < 100 * 1048576 && ((r.cpu_user_seconds as number) ?? 0) < 1).toBe(
        true,
      );
      expect(text).not.toContain("Resources");
      for (const [key, value] of Object.entries(s)) {
        if (NOT_IN_TEXT.has(key) || key === "resources") continue;
        for (const leaf of leavesOf(value)) {
          if (key === "duration_seconds") continue; // worded as 0.1s
          if (key === "artifacts" && /^\d{4}-\d\d-\d\dT/.test(leaf)) continue; // modified_at: bookkeeping
          const found = text.includes(leaf.replace(/\n$/, ""));
          expect({ key, leaf, found }).toEqual({ key, leaf, found: true });
        }
      }
      // structuredContent (what Claude Code on a success and Codex always read) is the same result, compact
      expect(s).toMatchObject({ state: "failed", exit_code: 1, parsed_results: { passed: 41, failed: 1 } });
      expect(s).not.toHaveProperty("signal");
    });

    test("a pending answer: the tails so far and the exact next call are in the text", async () => {
      const gate = path.join(box.root, `gate-${era}`);
      const result = await conn.client.callTool({
        name: "run",
        arguments: {
          command: gatedCommand(gate, "echo warming up"),
          inline_timeout_seconds: 0.5,
        },
      });
      const s = structured<Json>(result);
      try {
        expect(s.delivery).toBe("detached");
        const text = textOf(result);
        expect(text).toContain("stdout so far (11 bytes):\nwarming up");
        expect(text).toContain(`Call wait_for_job with {"job_id":"${s.job_id as string}"}`);
        expect(s.next_action).toContain(`Call wait_for_job with {"job_id":"${s.job_id as string}"}`);
        for (const absent of ["truncated", "stderr_bytes", "idempotent_replay", "job_state"])
          expect(s).not.toHaveProperty(absent);
        // while pending, how long the job has been waited on stays (a model decides on it whether to wait on)
        expect(s.waited_seconds as number).toBeGreaterThan(0);
        const sizes = sizesOf(result as Json);
        console.log(`a pending answer (${era}): ${JSON.stringify(sizes)}`);
        // measured 654 / 414 B: the next call is in next_action (and the text) with the job's ID
        expect(sizes["Claude Code / Codex"]!).toBeLessThanOrEqual(700);
        expect(sizes["Qwen Code / opencode"]!).toBeLessThanOrEqual(450);
      } finally {
        writeFileSync(gate, "");
        await conn.client.callTool({
          name: "wait_for_job",
          arguments: { job_id: s.job_id, timeout_seconds: 30 },
        });
      }
    });

    test("get_job_logs: the lines are in the text as well as in structuredContent (each model reads one)", async () => {
      const lines = Array.from({ length: 40 }, (_, i) => `log line number ${i} with some words`);
      const ran = await conn.client.callTool({
        name: "run",
        arguments: { command: ["sh", "-c", `printf '%s\\n' ${lines.map((l) => `'${l}'`).join(" ")}`] },
      });
      const jobId = structured<Json>(ran).job_id as string;
      const logs = await conn.client.callTool({
        name: "get_job_logs",
        arguments: { job_id: jobId, tail_lines: 5 },
      });
      expect(structured<Json>(logs).stdout).toContain("log line number 39");
      const text = textOf(logs);
      expect(text).toContain("stdout: lines 36–40 of 40");
      expect(text).toContain(lines.slice(35).join("\n"));
      expect(text).not.toContain("log line number 34 ");
    });

    test("an error: the text carries code, message and hint", async () => {
      const result = await conn.client.callTool({ name: "wait_for_job", arguments: { job_id: "job_nope" } });
      expect(result.isError).toBe(true);
      const error = structured<{ error: { code: string; message: string; hint: string } }>(result).error;
      expect(textOf(result)).toBe(`${error.code}: ${error.message}\nNext: ${error.hint}`);
    });
  });
}

describe("a client whose model would get both parts gets the text alone", () => {
  test("Qwen Code: text, or on isError structuredContent; Gemini CLI on isError: text; others both", async () => {
    const box = makeSandbox();
    try {
      // [clientInfo.name, structuredContent on a success, on an error]
      const cases = [
        ["gemini-cli-mcp-client", true, false],
        ["qwen-cli-mcp-client-awaitless", false, true],
        ["claude-code", true, true],
        ["some-agent", true, true],
      ] as const;
      for (const [name, onSuccess, onError] of cases) {
        const conn = await connectStdio("legacy", box.env, box.root, name);
        try {
          const ok = await conn.client.callTool({
            name: "run",
            arguments: { command: ["echo", `ok ${name}`] },
          });
          const failed = await conn.client.callTool({
            name: "run",
            arguments: { command: ["sh", "-c", "echo broken >&2; exit 4"] },
          });
          const refused = await conn.client.callTool({
            name: "run",
            arguments: { command: ["true"], cwdd: "/" },
          });
          const has = (r: Json) => r.structuredContent !== undefined;
          expect({ name, ok: has(ok), failed: has(failed), refused: has(refused) }).toEqual({
            name,
            ok: onSuccess,
            failed: onError,
            refused: onError,
          });
          expect(textOf(ok)).toContain(`stdout (${`ok ${name}`.length + 1} bytes):\nok ${name}`);
          if (name.startsWith("qwen")) {
            // Qwen Code's raw error result repeats the text blocks: its errors carry structuredContent alone
            for (const r of [failed, refused]) expect(r.content).toEqual([]);
            expect(structured<Json>(failed)).toMatchObject({
              state: "failed",
              exit_code: 4,
              digest: ["broken"],
            });
            expect(structured<{ error: Json }>(refused).error).toMatchObject({ code: "invalid_argument" });
            continue;
          }
          expect(textOf(failed)).toContain("failed with exit code 4");
          expect(textOf(failed)).toContain("Digest:\nbroken");
          expect(textOf(refused)).toContain(
            "invalid_argument: Invalid arguments for run: unknown argument `cwdd`",
          );
          expect(textOf(refused)).toContain("Next: Rename cwdd → cwd");
        } finally {
          await conn.close();
        }
      }
    } finally {
      box.remove();
    }
  }, 40_000);
});
